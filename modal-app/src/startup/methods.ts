/** The ModalMethods the host SDK calls over penpal. */
import {
  type InitResult,
  LatchError,
  type ModalMethods,
  OAUTH_PROVIDERS,
  type OAuthProvider,
  type ServerAppConfig,
  type User,
} from '@latch/shared'
import { dispatchWalletEvent } from '../connectors/events.ts'
import { exitFlow, initialize, login } from '../flow/flow.ts'
import { applyLocale } from '../i18n/i18n.ts'
import { callHost, runtime } from '../runtime.ts'
import { preloadScreens } from '../screens/lazy.tsx'
import { logout } from '../session/account.ts'
import { track } from '../session/analytics.ts'
import { store } from '../store.ts'
import {
  chainRead,
  createWallet,
  exportWallet,
  recoverWallet,
  sendTransaction,
  signFlow,
  signMessage,
} from '../wallet/index.ts'
import { checkHostConfig } from './config-check.ts'

/**
 * The session fork loads when a call needs it (a fork token to redeem, `forkSession()`, the
 * query warning), not with the landing: most opens have none, and the landing's JavaScript
 * with React DOM is near its budget (size.test.ts).
 */
const loadFork = () => import('../fork/fork.ts')

/** link() of the kinds with a screen here, and connectWallet(): not the landing's either. */
const loadEntries = () => import('../flow/entries.ts')

export interface MethodsContext {
  /** The server's app configuration, fetched at startup. */
  serverConfig: () => Promise<ServerAppConfig>
  /** The session restored from a stored refresh token at startup. */
  restoredUser: () => Promise<User | null>
}

export function createModalMethods(ctx: MethodsContext): ModalMethods {
  return {
    async init(config, params, flow, fork, walletClient, forkInQuery): Promise<InitResult> {
      // First, so a configuration refused below does not hide it.
      if (forkInQuery === true) callHost('emit', 'warning', (await loadFork()).FORK_QUERY_WARNING)
      const { config: host, warnings } = await checkHostConfig(config)
      for (const warning of warnings) callHost('emit', 'warning', warning)
      // The locale's chunk loads beside the app configuration; the landing waits for both.
      const language = applyLocale(host)
      const server = await ctx.serverConfig()
      await language
      initialize(server, host)
      const restored = await ctx.restoredUser()
      // Opened from a session fork's deep link: signs in with its token (fork.ts).
      const user =
        typeof fork === 'string' && fork
          ? await (await loadFork()).redeemFork(fork, restored)
          : restored
      track('sdk_initialize')
      const app = store.getState().app
      if (!app) throw LatchError.of('something_went_wrong')
      // Back from a provider: the OAuth screen opens now, so a login() the host calls once
      // ready joins the flow in progress (oauth.ts).
      if (params) {
        // No click in this page precedes what the return leads to (e.g. the allowlist screen).
        void preloadScreens()
        // Loaded only here; awaited, so init answers once the flow is on screen.
        ;(await import('../oauth/oauth-return.ts')).resumeOAuth(params, flow)
      } else if (walletClient === 'phantom' && !user) {
        // Opened by Phantom's link: is this Phantom's browser? (Loaded only here.)
        void import('../connectors/phantom.ts').then((m) => m.checkPhantomClientLink())
      }
      return { app: app.config, warnings, user }
    },
    login,
    link: (kind) =>
      (OAUTH_PROVIDERS as readonly string[]).includes(kind)
        ? // Its code, the social buttons' (oauth.ts), is not the landing's.
          import('../oauth/oauth.ts').then((m) => m.linkOAuth(kind as OAuthProvider))
        : loadEntries().then((m) => m.link(kind)),
    // Its code is not the landing's: it loads at the host's first unlink().
    unlink: (target) => import('../session/unlink.ts').then((m) => m.unlink(target)),
    logout,
    getUser: async () => store.getState().user,
    getAccessToken: () => runtime().session.getAccessToken(),
    // The host's Escape or backdrop: the host leaves its dialog open and asks, so a flow that
    // may not be left (a transaction being submitted) keeps it; otherwise the modal closes it.
    async close() {
      exitFlow(true)
    },
    createWallet,
    recoverWallet,
    signMessage,
    sendTransaction,
    exportWallet,
    rpc: chainRead,
    chains: async () => [...(store.getState().app?.config.chains ?? [])],
    // The sign flow checks the typed data's shape itself (an object or its JSON).
    signTypedData: (typedData, options) =>
      signFlow({ kind: 'typedData', typedData: typedData as Record<string, unknown> }, options),
    forkSession: () => loadFork().then((m) => m.forkSession()),
    connectWallet: () => loadEntries().then((m) => m.connectWallet()),
    // To the connector of that wallet (connectors/); the bridge checked the payload.
    async walletEvent(id, event, payload) {
      dispatchWalletEvent(String(id), event, payload)
    },
  }
}
