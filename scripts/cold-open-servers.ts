/**
 * The servers one cold open talks to (the API on PGlite, the modal server, the demo host page),
 * started in a process of their own by `npm run bench -- frames` (bench-frames.ts forks this
 * file). In production these servers run on another machine; in the bench's own process they
 * would share its event loop with the CDP traffic that drives Chromium, and the modal's HTML
 * would wait behind it. The frontend build to serve comes in the environment, so two builds can
 * be measured side by side (`--compare`):
 *   LATCH_BENCH_MODAL_DIR  the modal page (index.html and assets)
 *   LATCH_BENCH_SDK_DIR    sdk.js and latch.js
 *   LATCH_BENCH_LOGIN_METHODS  the app's login methods, comma-separated; a social provider gets
 *                          a client id, so that its button shows on the landing
 *   LATCH_BENCH_SSR        `off`: the modal server does not render the landing (modal-app/ssr.ts)
 *   LATCH_BENCH_FLOOR      `on`: also serves the floor (cold-open-floor.ts)
 * Answers its parent with `{ hostUrl, modalUrl, floor? }` once listening; stops when the parent
 * disconnects (it ended, or crashed).
 */
import { randomBytes } from 'node:crypto'
import { startServer } from '@latch/server'
import {
  type LoginMethod,
  OAUTH_PROVIDERS,
  type OAuthProvider,
  splitLoginMethods,
} from '@latch/shared'
import { freePort } from '../e2e/src/harness.ts'
import { startHostServer } from '../e2e/src/host-server.ts'
import { startModalServer } from '../modal-app/server.ts'
import { type FloorUrls, startFloor } from './cold-open-floor.ts'

export interface ColdOpenServers {
  hostUrl: string
  modalUrl: string
  /** The floor's two pages, with LATCH_BENCH_FLOOR=on. */
  floor?: FloorUrls
}

function required(name: string): string {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set`)
  return value
}

/** The app's login methods from LATCH_BENCH_LOGIN_METHODS; refuses a name Latch does not know. */
function loginMethodsFromEnv(): LoginMethod[] {
  const { methods, unknown } = splitLoginMethods(required('LATCH_BENCH_LOGIN_METHODS'))
  if (unknown.length) {
    throw new Error(`LATCH_BENCH_LOGIN_METHODS: unknown login method(s): ${unknown.join(', ')}`)
  }
  return methods
}

async function main(): Promise<void> {
  const loginMethods = loginMethodsFromEnv()
  const send = process.send?.bind(process)
  if (!send) throw new Error('cold-open-servers.ts runs as a child of bench-frames.ts')
  const stops: (() => Promise<unknown>)[] = []
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {})
  }
  process.once('disconnect', () => {
    void stopAll().finally(() => process.exit(0))
  })

  const modalPort = await freePort()
  const modalUrl = `http://127.0.0.1:${modalPort}`
  const api = await startServer({
    host: '127.0.0.1',
    port: 0,
    log: () => {},
    // In memory: nothing shared with the e2e runs of other engineers on this machine.
    env: {
      NODE_ENV: 'test',
      LATCH_MODAL_ORIGIN: modalUrl,
      DATABASE_URL: 'memory://',
      LATCH_SECRET: randomBytes(32).toString('hex'),
    },
  })
  stops.push(() => api.close())
  const modal = await startModalServer({
    host: '127.0.0.1',
    port: modalPort,
    apiUrl: new URL(api.url).origin,
    distDir: required('LATCH_BENCH_MODAL_DIR'),
    sdkDir: required('LATCH_BENCH_SDK_DIR'),
    ssr: process.env.LATCH_BENCH_SSR !== 'off',
  })
  stops.push(() => modal.close())
  let appId = ''
  const host = await startHostServer({
    modalUrl,
    get appId() {
      return appId
    },
  })
  stops.push(() => host.close())
  const app = await api.admin.createApp({
    name: 'Latch bench',
    allowedOrigins: [host.url],
    loginMethods,
    oauth: Object.fromEntries(
      loginMethods
        .filter((m): m is OAuthProvider => OAUTH_PROVIDERS.includes(m as OAuthProvider))
        .map((p) => [p, { clientId: `latch-bench-${p}` }]),
    ),
  })
  appId = app.id
  const ready: ColdOpenServers = { hostUrl: host.url, modalUrl }
  if (process.env.LATCH_BENCH_FLOOR === 'on') {
    const floor = await startFloor(host.url, modalUrl, app.id)
    stops.push(async () => floor.close())
    ready.floor = floor.floor
  }
  send(ready)
}

main().catch((error: unknown) => {
  console.error(`[cold-open servers] ${error instanceof Error ? error.stack : String(error)}`)
  process.exit(1)
})
