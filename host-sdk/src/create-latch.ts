import {
  exposeMethods,
  type LatchClient,
  LatchError,
  type LatchOptions,
  MODAL_CONNECT_TIMEOUT_MS,
  type ModalMethods,
  validateAppId,
} from '@latch/shared'
import { connect, WindowMessenger } from 'penpal'
import type { WalletBridge } from './bridge/bridge.ts'
import type { BridgeModule } from './bridge/index.ts'
import { createCalls, type FlowExit } from './calls.ts'
import { createEvents } from './events.ts'
import { type Frame, mountFrame } from './frame.ts'
import { createHostMethods } from './host-methods.ts'
import { landingQuery } from './landing-query.ts'
import { type OAuthReturn, takeOAuthReturn } from './oauth.ts'
import type { ProviderModule } from './provider/index.ts'

/** After the frame reloads, init is retried this often until the new handshake answers. */
const REINIT_ATTEMPT_MS = 1000
const REINIT_ATTEMPTS = 10

/** init's arguments after the configuration: an OAuth return, or null once reloaded. */
type InitArgs = Parameters<ModalMethods['init']> extends [unknown, ...infer R] ? R : never

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

/**
 * The frame's window, once it holds the modal's document: at the first message the frame posts
 * from the modal's origin (the modal starts the handshake, its SYN); rejects after `timeout` ms
 * without one. Asking for `iframe.contentWindow` while the frame still shows its initial
 * about:blank document makes the browser build a script context for that document (~15 ms of a
 * phone's main thread, which the host page and the modal share while the modal starts), and the
 * handshake needs the window only once the modal is there to answer it.
 */
function modalWindow(iframe: HTMLIFrameElement, modalOrigin: string, timeout: number) {
  return new Promise<MessageEvent>((resolve, reject) => {
    // Whichever comes first settles it and stops the other: no timer outlives the handshake
    // (one left would reach for the page's globals up to `timeout` ms after the page, or a
    // test's environment, was gone).
    const settle = (first?: MessageEvent) => {
      clearTimeout(timer)
      removeEventListener('message', onMessage)
      first ? resolve(first) : reject(unreachable(`Connection timed out after ${timeout}ms`))
    }
    // The frame's window is asked for only once the origin is the modal's: when the frame holds
    // the modal (or another window of its origin wrote). Both null: the frame was taken off the
    // page, and the modal is unreachable.
    const onMessage = (e: MessageEvent) => {
      if (e.origin === modalOrigin && e.source === iframe.contentWindow) settle(e)
    }
    const timer = setTimeout(settle, timeout)
    addEventListener('message', onMessage)
  })
}

/**
 * Starts Latch on this page: preloads the modal in a hidden frame and returns the client.
 * The frame, the handshake and its renewal after a reload live here; events, calls in flight
 * and what the modal may call on the page each have their own file.
 * @example const latch = createLatch({ appId, modalUrl: 'https://auth.example.com' })
 * const { user } = await latch.login()
 */
export function createLatch(options: LatchOptions): LatchClient {
  const events = createEvents(options)
  const calls = createCalls()
  let frame: Frame | undefined
  let destroyConnection: (() => void) | undefined
  let loads = 0
  let destroyed = false
  // The modal's URL without a trailing slash, once started: where the lazily loaded chunks live.
  let base = ''
  /**
   * `import()` of a file beside sdk.js on the modal's origin, built at run time (so bundlers of
   * this source are told to leave it alone: vite, webpack). Every call imports the same URL, so
   * the browser answers the module it loaded once. After a failure the next call asks under a
   * URL of its own: a browser may keep a module's failed fetch for its URL (Chromium does) and
   * fail the same import again without asking.
   */
  const lazyFile = <T>(file: string): (() => Promise<T>) => {
    let failures = 0
    return () =>
      import(/* @vite-ignore */ /* webpackIgnore: true */ `${base}/${file}?${failures}`).catch(
        (e: unknown) => {
          failures++
          throw e
        },
      )
  }
  // src/provider/: the EIP-1193 provider, on the first getEthereumProvider().
  const provider = lazyFile<ProviderModule>('provider.js')
  // src/bridge/: the wallet bridge, the first time the modal asks for wallets, so pages whose
  // visitors never use one do not load it.
  const bridgeModule = lazyFile<BridgeModule>('wallet-bridge.js')
  let bridge: WalletBridge | undefined
  let kill: (error: LatchError) => void = () => {}
  const killed = new Promise<never>((_, reject) => {
    kill = reject
  })
  const setOpen = (open: boolean) => frame?.setOpen(open)
  // The height of the landing the modal page painted from the server's HTML, while its
  // JavaScript has not connected yet (modal-app/src/ssr/before-hydration.ts posts it first); and
  // whether login() was called meanwhile. Both: the frame shows that landing at once (what the
  // visitor types or clicks meanwhile, the modal carries out once it runs; a visitor signed in
  // already, the modal closes it again: flow.ts login()). The modal names the dialog as it
  // takes the frame over.
  let painted: number | undefined
  let wanted = false
  const showPainted = () => painted && wanted && setOpen(true)
  const init = (remote: ModalMethods, timeout: number | undefined, ...args: InitArgs) =>
    calls.invoke(remote, (r) => r.init(options.config ?? {}, ...args), timeout)

  // The modal once connected; each reload of the frame chains a new init.
  let linked: Promise<ModalMethods>
  let initialized: Promise<unknown>

  const start = async (
    modalUrl: URL,
    appId: string,
    oauthReturn: OAuthReturn,
  ): Promise<ModalMethods> => {
    // Set before any wait: getEthereumProvider() may import from it at once.
    base = modalUrl.href.replace(/\/+$/, '')
    const parentId = options.config?.render?.inParentNodeId
    // Mounted as soon as its place exists: a tag in the body need not wait for the rest of the
    // page and its deferred scripts (DOMContentLoaded), which on a phone can be long.
    const placed = document.body && (!parentId || document.getElementById(parentId))
    if (!placed && document.readyState === 'loading') {
      await new Promise((resolve) => document.addEventListener('DOMContentLoaded', resolve))
    }
    if (destroyed) throw unreachable()
    const app = encodeURIComponent(appId)
    frame = mountFrame(
      // The query lets the modal server answer frame-ancestors with this app's origins, and
      // render the landing of this configuration.
      `${base}/?app=${app}${landingQuery(options.config, parentId)}#app=${app}`,
      parentId,
      // The dialog stays until the modal answers: it closes it itself (setOpen), unless the
      // flow on screen may not be left (a transaction being submitted).
      () =>
        void linked
          .then((remote) => calls.invoke(remote, (r) => r.close()))
          // A modal that cannot answer cannot end its flows: end them here.
          .catch(() => {
            setOpen(false)
            calls.settleAll()
          }),
    )
    frame.iframe.addEventListener('load', () => {
      if (++loads > 1) reconnect()
    })
    // The handshake starts once the frame holds the modal's document (modalWindow). A client
    // destroyed meanwhile has taken the frame off the page: no modal writes from it any more, and
    // the wait ends at the timeout (the client's promises were rejected at once).
    const first = await modalWindow(frame.iframe, modalUrl.origin, MODAL_CONNECT_TIMEOUT_MS)
    // The modal page's first message: its painted landing's height and name, when the server
    // rendered it (resize() takes only a height > 0); else the modal's handshake. The dialog
    // and frame are named from the first paint, as the modal names them (setOpen's label).
    painted = first.data?.latchLanding
    if (painted) {
      frame.setOpen(false, first.data.title)
      frame.resize(painted)
      showPainted()
      // Shown: the connection's setup, whose functions compile at their first call, waits for
      // the browser's next frame, which paints the landing (an animation frame, then a task; a
      // hidden page gets no frames: 50 ms at most). A client destroyed meanwhile connects to
      // nothing.
      if (wanted)
        await new Promise((go) => {
          requestAnimationFrame(() => setTimeout(go))
          setTimeout(go, 50)
        })
      if (destroyed) throw unreachable()
    }
    const connection = connect({
      messenger: new WindowMessenger({
        remoteWindow: first.source as Window,
        allowedOrigins: [modalUrl.origin],
      }),
      methods: exposeMethods(
        createHostMethods(
          () => frame,
          events,
          calls,
          // A wallet's events go to the modal; one that cannot take them (yet) drops them.
          () =>
            bridgeModule().then(
              (m) =>
                (bridge ??= m.createBridge({
                  onEvent: (...event) =>
                    linked.then((r) => r.walletEvent(...event)).catch(() => {}),
                })),
            ),
        ),
      ),
      timeout: MODAL_CONNECT_TIMEOUT_MS,
    })
    destroyConnection = connection.destroy
    // Failures cross as serialized LatchErrors; calls.ts turns them back (toLatchError).
    const remote = (await connection.promise.catch((e) => {
      throw unreachable(e instanceof Error ? e.message : undefined)
    })) as unknown as ModalMethods
    painted = 0
    // The modal reports configuration warnings itself, through emit('warning'). Calls go out
    // right behind init, not after its reply (a hop less on the first open): the modal holds
    // them until init settled, and fails them with init's error (startup.ts).
    initialized = init(remote, undefined, ...oauthReturn)
    return remote
  }

  /** The frame reloaded: its flows are gone; penpal shakes hands again, then the modal needs init. */
  const reconnect = () => {
    calls.settleAll()
    setOpen(false)
    const previous = linked
    linked = previous.then(async (remote) => {
      for (let attempt = 1; ; attempt++) {
        try {
          await init(remote, REINIT_ATTEMPT_MS, null)
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
  const ready = linked.then(() => initialized).then(() => {})
  ready.catch(() => {})

  /** Waits for the modal, then calls it. */
  const remote = () => Promise.race([linked, killed])
  /**
   * A flow (login, link, wallet): the frame closes if it fails (an exit, the modal gone, an
   * error), except when it was refused because another request is on screen: that one stays.
   * Gone, the modal rejects it with `exit`: unreachable, unless the flow has an exit of its own.
   */
  const flow = <T>(run: (r: ModalMethods) => Promise<T>, exit: FlowExit = 'modal_unreachable') =>
    remote().then((r) => {
      const result = calls.flow(r, run, exit)
      // calls.ts rejects with LatchErrors only. Told apart by its provider code, -32002, not by
      // naming the catalogue entry: a named entry ships in the bundle, and any rpc_ entry keeps
      // the provider-code map too (build.ts): ~170 B gzip.
      result.catch((e: LatchError) => e.rpcCode === -32002 || setOpen(false))
      return result
    })
  const call = <T>(run: (r: ModalMethods) => Promise<T>) =>
    remote().then((r) => calls.invoke(r, run))

  const client: LatchClient = {
    ready,
    login: () => {
      wanted = true
      showPainted()
      return flow((r) => r.login(), 'login_exited')
    },
    link: (kind) => flow((r) => r.link(kind), 'link_exited'),
    unlink: (account) => call((r) => r.unlink(account)),
    logout: () => call((r) => r.logout()),
    getUser: () => call((r) => r.getUser()),
    getAccessToken: () => call((r) => r.getAccessToken()),
    createWallet: () => flow((r) => r.createWallet(), 'create_exited'),
    recoverWallet: () => flow((r) => r.recoverWallet(), 'recovery_exited'),
    // The modal rejects a close itself ('Signature rejected', 'User exited the modal before
    // submitting the transaction'); gone, it is unreachable.
    signMessage: (message, options) => flow((r) => r.signMessage(message, options)),
    sendTransaction: (request, options) => flow((r) => r.sendTransaction(request, options)),
    // The modal rejects a close itself ('export_exited'); gone, it is unreachable.
    exportWallet: () => flow((r) => r.exportWallet()),
    // The modal rejects a close itself ('connect_exited'); gone, it is unreachable.
    connectWallet: () => flow((r) => r.connectWallet()),
    // The modal rejects a close itself ('fork_exited'); gone, it is unreachable.
    forkSession: () => flow((r) => r.forkSession()),
    // provider.js makes one provider per client. Without a modal URL the import fails and the
    // call rejects.
    getEthereumProvider: (options) =>
      provider().then((m) => m.default(client, call, flow, options)),
    // By name through the modal's rpc, as the provider sends it: no entry of its own.
    sendCalls: (request) =>
      flow((r) => r.rpc(0, 'wallet_sendCalls', [request])) as Promise<{
        id: string
      }>,
    on: events.on,
    off: events.off,
    destroy() {
      if (destroyed) return
      destroyed = true
      kill(unreachable())
      calls.settleAll('modal_unreachable')
      destroyConnection?.()
      frame?.remove()
      events.clear()
    },
  }
  return client
}
