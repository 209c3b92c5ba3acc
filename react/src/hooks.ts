/**
 * The hooks: each reads the provider's store through useSyncExternalStore (so a 'user', 'login'
 * or 'logout' event re-renders exactly the components that read it) and hands out the client's
 * methods as stable functions, typed from the client's own signatures.
 */
import type {
  LatchClient,
  LatchError,
  LoginResult,
  SendCallsRequest,
  User,
  WalletAccount,
} from '@latch/shared'
import { embeddedWallet, toLatchError } from '@latch/shared'
import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react'
import { useLatchStore } from './provider.tsx'
import { INITIAL_STATE, type LatchState, type LatchStore } from './store.ts'

type Method = Exclude<keyof LatchClient, 'ready' | 'on' | 'off' | 'destroy'>

/** A client method that waits for nothing: called before the client exists, it rejects. */
function bind<M extends Method>(store: LatchStore, method: M): LatchClient[M] {
  return ((...args: unknown[]) => {
    try {
      const client = store.client()
      return (client[method] as (...a: unknown[]) => unknown).apply(client, args)
    } catch (e) {
      return Promise.reject(e)
    }
  }) as LatchClient[M]
}

// The server's snapshot: nothing is known there (the client starts in the browser).
const serverSnapshot = () => INITIAL_STATE

function useLatchState(store: LatchStore): LatchState {
  return useSyncExternalStore(store.subscribe, store.getSnapshot, serverSnapshot)
}

export interface UseLatch {
  ready: boolean
  /** Why Latch could not start, else null. */
  error: LatchError | null
  authenticated: boolean
  user: User | null
  login: LatchClient['login']
  logout: LatchClient['logout']
  link: LatchClient['link']
  unlink: LatchClient['unlink']
  getAccessToken: LatchClient['getAccessToken']
}

/** Who is signed in, and the account calls. */
export function useLatch(): UseLatch {
  const store = useLatchStore()
  const state = useLatchState(store)
  const methods = useMemo(
    () => ({
      login: bind(store, 'login'),
      logout: bind(store, 'logout'),
      link: bind(store, 'link'),
      unlink: bind(store, 'unlink'),
      getAccessToken: bind(store, 'getAccessToken'),
    }),
    [store],
  )
  return {
    ready: state.ready,
    error: state.error,
    authenticated: state.user !== null,
    user: state.user,
    ...methods,
  }
}

export interface UseWallet {
  /** The signed-in user's in-app wallet, once it exists. */
  wallet: WalletAccount | null
  create: LatchClient['createWallet']
  recover: LatchClient['recoverWallet']
  signMessage: LatchClient['signMessage']
  sendTransaction: LatchClient['sendTransaction']
  /** A batch of calls the app pays for (EIP-5792); `useSendCalls` also follows its status. */
  sendCalls: LatchClient['sendCalls']
  export: LatchClient['exportWallet']
}

/** The in-app wallet and its calls (each a screen of the modal the visitor answers). */
export function useWallet(): UseWallet {
  const store = useLatchStore()
  const { user } = useLatchState(store)
  const wallet = useMemo(
    () => (user ? (embeddedWallet(user.linkedAccounts) ?? null) : null),
    [user],
  )
  const methods = useMemo(
    () => ({
      create: bind(store, 'createWallet'),
      recover: bind(store, 'recoverWallet'),
      signMessage: bind(store, 'signMessage'),
      sendTransaction: bind(store, 'sendTransaction'),
      sendCalls: bind(store, 'sendCalls'),
      export: bind(store, 'exportWallet'),
    }),
    [store],
  )
  return { wallet, ...methods }
}

/** The latest value of a callback, so listeners need not be re-added when it changes. */
function useLatest<T>(value: T) {
  const ref = useRef(value)
  useEffect(() => {
    ref.current = value
  })
  return ref
}

export interface UseLoginOptions {
  /**
   * Every completed sign-in: from `login()`, and also after an OAuth redirect brought the
   * visitor back (the page reloaded, so no `login()` promise is left to settle then).
   */
  onComplete?: (result: LoginResult) => void
  /** A `login()` that failed or that the visitor closed (`login_exited`). */
  onError?: (error: LatchError) => void
}

/** Sign-in with callbacks; `login()` never rejects (its failure goes to `onError`). */
export function useLogin(options: UseLoginOptions = {}): { login: () => void; ready: boolean } {
  const store = useLatchStore()
  const { ready } = useLatchState(store)
  const latest = useLatest(options)
  // The 'login' event is the one moment every completed sign-in shares, the OAuth return
  // included; listening to the promise as well would report a sign-in twice.
  useEffect(() => store.onLogin((result) => latest.current.onComplete?.(result)), [store, latest])
  const login = useMemo(
    () => () => {
      bind(store, 'login')().catch((e: LatchError) => latest.current.onError?.(e))
    },
    [store, latest],
  )
  return { login, ready }
}

export interface UseConnectWalletOptions {
  onSuccess?: (wallet: Awaited<ReturnType<LatchClient['connectWallet']>>) => void
  onError?: (error: LatchError) => void
}

/** Connect-only: an external wallet without signing in. */
export function useConnectWallet(options: UseConnectWalletOptions = {}): {
  connectWallet: LatchClient['connectWallet']
} {
  const store = useLatchStore()
  const latest = useLatest(options)
  const connectWallet = useMemo<LatchClient['connectWallet']>(
    () => () => {
      const pending = bind(store, 'connectWallet')()
      pending.then(
        (wallet) => latest.current.onSuccess?.(wallet),
        (e: LatchError) => latest.current.onError?.(e),
      )
      return pending
    },
    [store, latest],
  )
  return { connectWallet }
}

/** Moves the signed-in session into a wallet app's in-app browser (the modal's fork screen). */
export function useFork(): { forkSession: LatchClient['forkSession'] } {
  const store = useLatchStore()
  return useMemo(() => ({ forkSession: bind(store, 'forkSession') }), [store])
}

/** A batch's status as `wallet_getCallsStatus` answers it (EIP-5792). */
export interface CallsStatus {
  version: string
  id: string
  chainId: string
  /** 100 pending, 200 confirmed, 500 reverted on chain. */
  status: number
  atomic: boolean
  receipts?: {
    logs: { address: string; data: string; topics: string[] }[]
    status: string
    blockHash: string
    blockNumber: string
    gasUsed: string
    transactionHash: string
  }[]
}

export interface UseSendCallsOptions {
  /** The batch was sent: its id (before it is in a block). */
  onSuccess?: (result: { id: string }) => void
  /** `sendCalls()` failed: closed before the click (`transaction_exited`) or refused. */
  onError?: (error: LatchError) => void
  /** How often the status is read while pending, in ms (1000). */
  pollMs?: number
}

export interface UseSendCalls {
  /**
   * `latch.sendCalls`: the batch on the wallet frame's review; resolves with its id once the
   * visitor's click sent it. Never needs a catch: its failure is also in `error`.
   */
  sendCalls: (request: SendCallsRequest) => Promise<{ id: string } | null>
  /** The last batch sent, until the next call. */
  id: string | null
  /** Its status, read (wallet_getCallsStatus) until it leaves pending; null before the first read. */
  status: CallsStatus | null
  /** Why the last call failed, or the status could not be read. */
  error: LatchError | null
  /** A batch is on the review or being sent. */
  pending: boolean
}

/** Batches the app pays for (EIP-5792): the call, its outcome, and its status until in a block. */
export function useSendCalls(options: UseSendCallsOptions = {}): UseSendCalls {
  const store = useLatchStore()
  const latest = useLatest(options)
  const [state, setState] = useState<Omit<UseSendCalls, 'sendCalls'>>({
    id: null,
    status: null,
    error: null,
    pending: false,
  })
  // Which call is the last: an earlier one settling late changes nothing.
  const call = useRef(0)
  const sendCalls = useCallback(
    async (request: SendCallsRequest) => {
      const mine = ++call.current
      setState({ id: null, status: null, error: null, pending: true })
      try {
        const result = await bind(store, 'sendCalls')(request)
        if (mine === call.current) setState((s) => ({ ...s, id: result.id, pending: false }))
        latest.current.onSuccess?.(result)
        return result
      } catch (e) {
        const error = toLatchError(e)
        if (mine === call.current) setState((s) => ({ ...s, error, pending: false }))
        latest.current.onError?.(error)
        return null
      }
    },
    [store, latest],
  )
  const { id } = state
  useEffect(() => {
    if (!id) return
    let alive = true
    let timer: ReturnType<typeof setTimeout> | undefined
    const read = async () => {
      try {
        const provider = await store.client().getEthereumProvider()
        const status = (await provider.request({
          method: 'wallet_getCallsStatus',
          params: [id],
        })) as CallsStatus
        if (!alive) return
        setState((s) => (s.id === id ? { ...s, status } : s))
        if (status.status === 100) timer = setTimeout(read, latest.current.pollMs ?? 1000)
      } catch (e) {
        if (alive) setState((s) => (s.id === id ? { ...s, error: toLatchError(e) } : s))
      }
    }
    void read()
    return () => {
      alive = false
      clearTimeout(timer)
    }
  }, [id, store, latest])
  return { sendCalls, ...state }
}
