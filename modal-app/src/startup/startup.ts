/**
 * Startup: the app id from the fragment, the API URL from the page, the app configuration,
 * then the penpal connection to the host page, made only if the host's origin is one the app
 * registered.
 */
import {
  API_PREFIX,
  createApiClient,
  exposeMethods,
  type HostMethods,
  LatchError,
  remoteMethods,
  type ServerAppConfig,
  type User,
} from '@latch/shared'
import { connect, WindowMessenger } from 'penpal'
import { fail } from '../flow/flow.ts'
import { setHost, setRuntime } from '../runtime.ts'
import { setUser } from '../session/account.ts'
import { createSession, type Session } from '../session/session.ts'
import { createTokenStore } from '../session/token-store.ts'
import { appConfigUrl, takeEarlyConfig } from './early.ts'
import { holdUntilInit } from './init-gate.ts'
import { createModalMethods } from './methods.ts'
import {
  apiUrlFromMeta,
  appIdFromHash,
  isAllowedOrigin,
  parentOrigin,
  setVerifiedHost,
} from './origin.ts'

export interface StartResult {
  /** Settles once the host connection is made, or refused. */
  connected: Promise<boolean>
  /**
   * Settles once the first render has what it needs: the host's first `init` settled (the app
   * and the host configuration are in the store, a restored session too), or the modal will
   * not connect (no app id, the configuration request failed, a host origin the app does not
   * allow, a failed handshake).
   */
  renderable: Promise<void>
  destroy(): void
}

export interface StartOptions {
  win?: Window
  fetch?: typeof fetch
  /**
   * Renders the modal: called once, synchronously, when `renderable` settles, so the first
   * render comes before any call the host sent behind `init` runs (a login's flow opens the
   * frame only once the landing was laid out and the host was told its height).
   */
  render?: () => void
}

export function start(options: StartOptions = {}): StartResult {
  const win = options.win ?? window
  const appId = appIdFromHash(win.location.hash)
  const apiUrl = apiUrlFromMeta(win.document)
  if (!appId || !apiUrl) {
    console.error(
      `Latch: the modal needs ${appId ? 'the latch-api-url meta tag' : 'an app id (#app=...)'}`,
    )
    fail(LatchError.of('missing_or_invalid_latch_app_id'))
    options.render?.()
    return { connected: Promise.resolve(false), renderable: Promise.resolve(), destroy() {} }
  }

  let session: Session | null = null
  const api = createApiClient({
    baseUrl: apiUrl,
    appId,
    accessToken: () => session?.getAccessToken() ?? Promise.resolve(null),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  })
  session = createSession({ api, tokens: createTokenStore(appId), onUser: setUser })
  setRuntime({ appId, apiUrl, api, session, host: null })

  // The configuration is public: no access token, so a stored session's refresh does not hold
  // it up. The inline script may have asked for it already (early.ts).
  const early = takeEarlyConfig(win, appConfigUrl(apiUrl, API_PREFIX, appId))
  const serverConfig = api.request<ServerAppConfig>(
    `/apps/${encodeURIComponent(appId)}`,
    undefined,
    early ? { auth: false, started: early } : { auth: false },
  )
  const restored: Promise<User | null> = session.restore().catch(() => null)
  let destroyConnection = (): void => {}
  let markRenderable = (): void => {}
  const renderable = new Promise<void>((resolve) => {
    let done = false
    markRenderable = () => {
      if (done) return
      done = true
      options.render?.()
      resolve()
    }
  })

  const connected = serverConfig.then(
    (config) => {
      const origin = parentOrigin(win)
      if (!isAllowedOrigin(origin, config.allowedOrigins ?? [])) {
        console.error(
          `Latch: the page at ${origin ?? 'an unknown origin'} is not an allowed origin of app ${appId}. Add it to the app's allowed origins; the modal will not connect to it.`,
        )
        return false
      }
      setVerifiedHost(origin, config.allowedOrigins ?? [])
      const methods = holdUntilInit(
        createModalMethods({
          serverConfig: () => serverConfig,
          restoredUser: () => restored,
        }),
        () => markRenderable(),
      )
      const connection = connect({
        messenger: new WindowMessenger({
          remoteWindow: win.parent,
          allowedOrigins: [origin as string],
        }),
        methods: exposeMethods(methods) as unknown as Record<string, (...args: never[]) => unknown>,
      })
      destroyConnection = () => connection.destroy()
      return connection.promise.then(
        (remote) => {
          setHost(remoteMethods<HostMethods>(remote))
          return true
        },
        () => false,
      )
    },
    (e: unknown) => {
      console.error(`Latch: could not load the configuration of app ${appId}`, e)
      fail(e)
      return false
    },
  )
  void connected.then((ok) => {
    if (!ok) markRenderable()
  })
  return { connected, renderable, destroy: () => destroyConnection() }
}
