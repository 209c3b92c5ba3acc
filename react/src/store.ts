/**
 * What the hooks read: whether the modal is ready and who is signed in, kept up to date from the
 * client's events, in the shape `useSyncExternalStore` wants (an immutable snapshot, replaced on
 * each change, and a subscribe that answers its own unsubscribe).
 */
import { type LatchClient, LatchError, type LoginResult, type User } from '@latch/host-sdk'

export interface LatchState {
  /** The modal is connected and the signed-in user (if any) is known. */
  ready: boolean
  /** Why the client could not start (an invalid app id, the modal unreachable), else null. */
  error: LatchError | null
  user: User | null
}

export const INITIAL_STATE: LatchState = Object.freeze({ ready: false, error: null, user: null })

export interface LatchStore {
  subscribe(listener: () => void): () => void
  getSnapshot(): LatchState
  /** The client once the provider has started it in the browser; rejects before. */
  client(): LatchClient
  /**
   * Hears every completed sign-in ('login' events) of whichever client is attached, also one
   * attached later: a component's effect runs before its provider's, which starts the client.
   */
  onLogin(listener: (result: LoginResult) => void): () => void
  /** Follows this client's events until the returned function is called. */
  attach(client: LatchClient): () => void
}

/** Rejection for calls made before the provider's effect ran (or on the server). */
export const notStarted = () =>
  LatchError.of('modal_unreachable', {
    details: 'Latch starts in the browser, after <LatchProvider> mounted',
  })

export function createLatchStore(): LatchStore {
  let state = INITIAL_STATE
  let current: LatchClient | undefined
  const listeners = new Set<() => void>()
  const loginListeners = new Set<(result: LoginResult) => void>()
  const set = (next: Partial<LatchState>) => {
    state = Object.freeze({ ...state, ...next })
    for (const listener of [...listeners]) listener()
  }

  return {
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    getSnapshot: () => state,
    onLogin(listener) {
      loginListeners.add(listener)
      return () => loginListeners.delete(listener)
    },
    client() {
      if (!current) throw notStarted()
      return current
    },
    attach(client) {
      current = client
      let live = true
      // An event is newer than the answer of a getUser() sent before it.
      let heard = false
      const onUser = (user: User | null) => {
        heard = true
        set({ user })
      }
      const onLogin = (result: LoginResult) => {
        onUser(result.user)
        for (const listener of [...loginListeners]) listener(result)
      }
      const onLogout = () => onUser(null)
      client.on('user', onUser)
      client.on('login', onLogin)
      client.on('logout', onLogout)
      client.ready
        .then(() => client.getUser())
        .then(
          (user) => live && set(heard ? { ready: true } : { ready: true, user }),
          (e: unknown) =>
            live &&
            set({
              error: asLatchError(e),
            }),
        )
      return () => {
        live = false
        client.off('user', onUser)
        client.off('login', onLogin)
        client.off('logout', onLogout)
        if (current === client) current = undefined
        set(INITIAL_STATE)
      }
    },
  }
}

/**
 * A LatchError of this package's copy, also for one from another copy on the page: @latch/wagmi
 * bundles the SDK too, and the client the two packages share may be made by it, so `instanceof`
 * alone would report its errors (origin_not_allowed, say) as modal_unreachable.
 */
export function asLatchError(e: unknown): LatchError {
  if (e instanceof LatchError) return e
  const other = e as Partial<LatchError> | null
  if (
    other !== null &&
    typeof other === 'object' &&
    other.name === 'LatchError' &&
    typeof other.code === 'string' &&
    typeof other.message === 'string' &&
    typeof other.type === 'string'
  ) {
    return new LatchError({
      code: other.code,
      type: other.type,
      message: other.message,
      status: other.status,
      retryable: other.retryable,
      details: other.details,
      rpcCode: other.rpcCode,
      retryAfter: other.retryAfter,
      cause: e,
    })
  }
  return LatchError.of('modal_unreachable')
}
