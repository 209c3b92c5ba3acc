import {
  API_TIMEOUT_MS,
  type ErrorCode,
  exposeMethods,
  type HostEventName,
  type HostMethods,
  type LatchClient,
  LatchError,
  type LatchEventHandler,
  type LatchEventName,
  type LatchOptions,
  type LoginResult,
  MODAL_CONNECT_TIMEOUT_MS,
  type ModalMethods,
  toLatchError,
  validateAppId,
} from '@latch/shared'
import { connect, WindowMessenger } from 'penpal'
import { type Frame, mountFrame } from './frame.ts'
import { type OAuthReturn, savePendingFlow, takeOAuthReturn } from './oauth.ts'

/** After the frame reloads, init is retried this often until the new handshake answers. */
export const REINIT_ATTEMPT_MS = 1000
const REINIT_ATTEMPTS = 10

type Handler = (payload: unknown) => void
type Rejecter = (error: LatchError) => void

const unreachable = (details?: string) =>
  LatchError.of('modal_unreachable', details ? { details } : {})

/** The modal's URL, without a trailing slash, if it is an http(s) URL. */
function parseModalUrl(modalUrl: string | undefined): URL | undefined {
  try {
    const url = new URL(modalUrl ?? location.origin)
    return /^https?:$/.test(url.protocol) ? url : undefined
  } catch {
    return undefined
  }
}

/** Loopback hosts may be reached over plain http (local development). */
const isAllowedNavigation = (url: URL) =>
  url.protocol === 'https:' ||
  (url.protocol === 'http:' && /^(localhost|127\.0\.0\.1|\[::1\])$/.test(url.hostname))

/**
 * Starts Latch on this page: preloads the modal in a hidden frame and returns the client.
 * @example const latch = createLatch({ appId, modalUrl: 'https://auth.example.com' })
 * const { user } = await latch.login()
 */
export function createLatch(options: LatchOptions): LatchClient {
  const handlers = new Map<string, Set<Handler>>()
  const { onSuccess } = options
  if (onSuccess && !options.suppressSuccessCallback) {
    // The modal emits 'login' as it closes after a sign-in: the success callback's moment.
    handlers.set(
      'login',
      new Set([(p) => onSuccess((p as LoginResult).user, (p as LoginResult).isNewUser)]),
    )
  }
  // Every call in flight, with the error it settles with if the modal goes away.
  const pending = new Map<Rejecter, ErrorCode>()
  let frame: Frame | undefined
  let destroyConnection: (() => void) | undefined
  let loads = 0
  let destroyed = false
  let kill: Rejecter = () => {}
  const killed = new Promise<never>((_, reject) => {
    kill = reject
  })

  const dispatch = (event: string, payload: unknown) => {
    for (const handler of [...(handlers.get(event) ?? [])]) {
      try {
        handler(payload)
      } catch (e) {
        console.error(e)
      }
    }
  }

  const settleAll = (fallback?: ErrorCode) => {
    for (const [reject, code] of pending) reject(LatchError.of(fallback ?? code))
  }

  const setOpen = (open: boolean) => frame?.setOpen(open)

  /** Calls the modal; quick calls time out, flows settle when the modal goes away. */
  const invoke = <T>(
    remote: ModalMethods,
    run: (remote: ModalMethods) => Promise<T>,
    timeout: number | undefined,
    exit: ErrorCode,
  ) =>
    new Promise<T>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined
      const done =
        <V>(fn: (v: V) => void) =>
        (v: V) => {
          clearTimeout(timer)
          pending.delete(fail)
          fn(v)
        }
      const fail: Rejecter = done(reject)
      pending.set(fail, exit)
      if (timeout) timer = setTimeout(() => fail(LatchError.of('client_request_timeout')), timeout)
      run(remote).then(done(resolve), (e) => fail(toLatchError(e)))
    })

  let linked: Promise<ModalMethods>

  const hostMethods = {
    async setOpen(open) {
      setOpen(open === true)
    },
    async resize(height) {
      frame?.resize(Number(height))
    },
    async emit(event: HostEventName, payload) {
      if (event === 'warning') console.warn(`Latch: ${payload}`)
      dispatch(event, payload)
    },
    async navigate(href, flow) {
      let url: URL | undefined
      try {
        url = new URL(href)
      } catch {}
      // A flow the host started, or the open modal (Retry after an OAuth return, whose
      // original login() did not survive the page navigation).
      const flowPending =
        frame?.isOpen() ||
        [...pending.values()].some((c) => c === 'login_exited' || c === 'link_exited')
      if (!url || !isAllowedNavigation(url) || !flowPending) {
        throw LatchError.of('invalid_data', { details: 'navigate: refused' })
      }
      // The return is handed to the modal only if this tab saved its flow (oauth.ts).
      savePendingFlow(flow)
      location.href = url.href
    },
    async pageUrl() {
      return location.href
    },
    async wallets() {
      return []
    },
    async request() {
      throw LatchError.of('method_not_available')
    },
  } satisfies HostMethods

  const start = async (
    modalUrl: URL,
    appId: string,
    oauthReturn: OAuthReturn,
  ): Promise<ModalMethods> => {
    if (document.readyState === 'loading') {
      await new Promise((resolve) => document.addEventListener('DOMContentLoaded', resolve))
    }
    if (destroyed) throw unreachable()
    const base = modalUrl.href.replace(/\/+$/, '')
    const app = encodeURIComponent(appId)
    frame = mountFrame(
      // The query lets the modal server answer frame-ancestors with this app's origins.
      `${base}/?app=${app}#app=${app}`,
      options.config?.render?.inParentNodeId,
      () => {
        setOpen(false)
        void linked
          .then((remote) => invoke(remote, (r) => r.close(), API_TIMEOUT_MS, 'modal_unreachable'))
          // A modal that cannot answer cannot end its flows: end them here.
          .catch(() => settleAll())
      },
    )
    frame.iframe.addEventListener('load', () => {
      if (++loads > 1) reconnect()
    })
    const contentWindow = frame.iframe.contentWindow
    if (!contentWindow) throw unreachable()
    const connection = connect({
      messenger: new WindowMessenger({
        remoteWindow: contentWindow,
        allowedOrigins: [modalUrl.origin],
      }),
      methods: exposeMethods(hostMethods),
      timeout: MODAL_CONNECT_TIMEOUT_MS,
    })
    destroyConnection = connection.destroy
    // Failures cross as serialized LatchErrors; invoke() turns them back (toLatchError).
    const remote = (await connection.promise.catch((e) => {
      throw unreachable(e instanceof Error ? e.message : undefined)
    })) as unknown as ModalMethods
    // The modal reports configuration warnings itself, through emit('warning').
    await invoke(
      remote,
      (r) => r.init(options.config ?? {}, ...oauthReturn),
      API_TIMEOUT_MS,
      'modal_unreachable',
    )
    return remote
  }

  /** The frame reloaded: its flows are gone; penpal shakes hands again, then the modal needs init. */
  const reconnect = () => {
    settleAll()
    setOpen(false)
    const previous = linked
    linked = previous.then(async (remote) => {
      for (let attempt = 1; ; attempt++) {
        try {
          await invoke(
            remote,
            (r) => r.init(options.config ?? {}, null),
            REINIT_ATTEMPT_MS,
            'modal_unreachable',
          )
          return remote
        } catch (e) {
          if (attempt >= REINIT_ATTEMPTS || destroyed) throw e
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
      }
    })
    linked.catch(() => {})
  }

  const app = validateAppId(options.appId)
  const modalUrl = typeof document === 'undefined' ? undefined : parseModalUrl(options.modalUrl)
  linked = Promise.race([
    !app.ok
      ? Promise.reject(app.error)
      : modalUrl
        ? start(modalUrl, app.value, takeOAuthReturn())
        : Promise.reject(unreachable('modalUrl must be an http(s) URL of a browser page')),
    killed,
  ])
  const ready = linked.then(() => {})
  ready.catch(() => {})

  /** A call once the modal is ready; `exit` is the error it settles with if the modal goes away. */
  const call = <T>(
    run: (remote: ModalMethods) => Promise<T>,
    exit: ErrorCode = 'modal_unreachable',
    flow = false,
  ): Promise<T> =>
    Promise.race([linked, killed]).then((remote) => {
      const result = invoke(remote, run, flow ? undefined : API_TIMEOUT_MS, exit)
      if (flow) result.catch(() => setOpen(false))
      return result
    })

  return {
    ready,
    login: () => call((r) => r.login(), 'login_exited', true),
    link: (kind) => call((r) => r.link(kind), 'link_exited', true),
    unlink: (account) => call((r) => r.unlink(account)),
    logout: () => call((r) => r.logout()),
    getUser: () => call((r) => r.getUser()),
    getAccessToken: () => call((r) => r.getAccessToken()),
    on<E extends LatchEventName>(event: E, handler: LatchEventHandler<E>) {
      const set = handlers.get(event) ?? new Set()
      set.add(handler as Handler)
      handlers.set(event, set)
    },
    off<E extends LatchEventName>(event: E, handler: LatchEventHandler<E>) {
      handlers.get(event)?.delete(handler as Handler)
    },
    destroy() {
      if (destroyed) return
      destroyed = true
      kill(unreachable())
      settleAll('modal_unreachable')
      destroyConnection?.()
      frame?.remove()
      handlers.clear()
    },
  }
}
