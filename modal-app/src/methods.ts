/** The ModalMethods the host SDK calls over penpal. */
import {
  type InitResult,
  LatchError,
  type ModalMethods,
  OAUTH_PROVIDERS,
  type OAuthProvider,
  type OAuthReturnParams,
  type ServerAppConfig,
  type User,
} from '@latch/shared'
import * as actions from './actions.ts'
import { track } from './analytics.ts'
import { checkHostConfig } from './config-check.ts'
import { linkOAuth, resumeOAuth } from './oauth.ts'
import { callHost, runtime } from './runtime.ts'
import { preloadScreens } from './screens/lazy.tsx'
import { store } from './store.ts'

export interface MethodsContext {
  /** The server's app configuration, fetched at startup. */
  serverConfig: () => Promise<ServerAppConfig>
  /** The session restored from a stored refresh token at startup. */
  restoredUser: () => Promise<User | null>
}

let returnParams: OAuthReturnParams | null = null

/** OAuth return parameters the host passed to init (consumed by the OAuth flow). */
export function oauthReturnParams(): OAuthReturnParams | null {
  return returnParams
}

const unavailable = (): Promise<never> => Promise.reject(LatchError.of('method_not_available'))

export function createModalMethods(ctx: MethodsContext): ModalMethods {
  return {
    async init(config, params, flow): Promise<InitResult> {
      const { config: host, warnings } = await checkHostConfig(config)
      for (const warning of warnings) callHost('emit', 'warning', warning)
      const server = await ctx.serverConfig()
      actions.initialize(server, host)
      returnParams = params ?? null
      const user = await ctx.restoredUser()
      track('sdk_initialize')
      const app = store.getState().app
      if (!app) throw LatchError.of('something_went_wrong')
      // Back from a provider: the OAuth screen opens now, so a login() the host calls once
      // ready joins the flow in progress (oauth.ts).
      if (returnParams) {
        // No click in this page precedes what the return leads to (e.g. the allowlist screen).
        void preloadScreens()
        resumeOAuth(returnParams, flow)
      }
      return { app: app.config, warnings, user }
    },
    login: () => actions.login(),
    link: (kind) =>
      (OAUTH_PROVIDERS as readonly string[]).includes(kind)
        ? linkOAuth(kind as OAuthProvider)
        : actions.link(kind),
    unlink: (account) => actions.unlink(account),
    logout: () => actions.logout(),
    getUser: async () => store.getState().user,
    getAccessToken: () => runtime().session.getAccessToken(),
    async close() {
      actions.exitFlow(false)
    },
    createWallet: unavailable,
    signMessage: unavailable,
    sendTransaction: unavailable,
    exportWallet: unavailable,
    forkSession: unavailable,
  }
}
