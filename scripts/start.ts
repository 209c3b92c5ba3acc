/**
 * `npm start`: Latch on this machine, on three origins: the API (LATCH_API_PORT, default 8787,
 * on 127.0.0.1, data in LATCH_DATA_DIR, default .latch), the modal with sdk.js
 * (LATCH_MODAL_PORT, default 8788), its connector origin for Coinbase Wallet's frame
 * (LATCH_CONNECTOR_PORT, default 8789, reached as http://connect.localhost:8789) and the demo
 * host page (LATCH_HOST_PORT, default 5173). The modal and the page are named localhost (both
 * listen on 127.0.0.1): browsers take no IP address as a passkey's RP ID, and localhost is one,
 * so passkey sign-in works in the demo. Seeds a demo app once and keeps its id in the data
 * folder. Without SMTP_URL the server prints e-mail codes to this log, and without Twilio
 * settings SMS codes too.
 * With anvil installed (a dev dependency) it also runs a local chain as the demo app's chain 1
 * and funds every in-app wallet of the demo app there (scripts/demo-chain.ts), so the page's
 * Send works; there the demo app also pays the gas of batched calls to a demo token (its sponsor,
 * scripts/demo-chain.ts), so the page's batch button works from a wallet holding no ETH.
 * LATCH_DEMO_CHAIN=off runs the demo without it. Ctrl-C stops everything, anvil too.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { startServer } from '@latch/server'
import {
  getChain,
  type LoginMethod,
  OAUTH_PROVIDERS,
  type OAuthProvider,
  type ServerAppConfig,
} from '@latch/shared'
import { buildFrontendOnce } from '../e2e/src/build.ts'
import { type DemoPageConfig, startHostServer } from '../e2e/src/host-server.ts'
import { serveLatch } from '../server/src/ops/serve.ts'
import { ANVIL_ACCOUNTS } from '../server/src/testing/anvil.ts'
import { DEMO_CHAIN_ID, startDemoChain, startDemoSponsor, startFunder } from './demo-chain.ts'

const DEMO_APP_FILE = 'demo-app.json'

function port(name: string, fallback: number): number {
  const raw = process.env[name]?.trim()
  if (!raw) return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1 || value > 65535) {
    throw new Error(`${name} must be a port number from 1 to 65535, got '${raw}'`)
  }
  return value
}

const say = (line: string) => console.log(`[latch] ${line}`)

type Admin = Awaited<ReturnType<typeof startServer>>['admin']
type AppSettings = Parameters<Admin['createApp']>[0]
type OAuthSettings = NonNullable<AppSettings['oauth']>

/**
 * Social sign-in for the demo app, only for the providers whose credentials are in the
 * environment: LATCH_DEMO_<PROVIDER>_CLIENT_ID (and _CLIENT_SECRET) for GOOGLE, TWITTER,
 * DISCORD and GITHUB; for Apple LATCH_DEMO_APPLE_CLIENT_ID, _TEAM_ID, _KEY_ID and
 * _PRIVATE_KEY_FILE (the .p8 team key). Register <API URL>/api/v1/oauth/callback/<provider>
 * as the redirect URI at the provider. With none set, social sign-in stays off.
 */
function demoOAuth(env: NodeJS.ProcessEnv = process.env): {
  providers: OAuthProvider[]
  oauth: OAuthSettings
} {
  const read = (name: string) => env[`LATCH_DEMO_${name}`]?.trim() || undefined
  const oauth: OAuthSettings = {}
  for (const provider of OAUTH_PROVIDERS) {
    const key = provider.toUpperCase()
    const clientId = read(`${key}_CLIENT_ID`)
    if (!clientId) continue
    if (provider === 'apple') {
      const appleTeamId = read('APPLE_TEAM_ID')
      const appleKeyId = read('APPLE_KEY_ID')
      const keyFile = read('APPLE_PRIVATE_KEY_FILE')
      if (!appleTeamId || !appleKeyId || !keyFile) continue
      oauth.apple = {
        clientId,
        appleTeamId,
        appleKeyId,
        applePrivateKey: readFileSync(keyFile, 'utf8'),
      }
      continue
    }
    const clientSecret = read(`${key}_CLIENT_SECRET`)
    oauth[provider] = { clientId, ...(clientSecret ? { clientSecret } : {}) }
  }
  return { providers: OAUTH_PROVIDERS.filter((p) => oauth[p]), oauth }
}

/**
 * The demo app of an earlier start (kept current with the host origin and this start's chain),
 * or a new one. Wallet and e-mail login are on as on any new app, SMS (codes in the log; the
 * page's 'Sign in by code' setting shows the phone field instead of the e-mail one) and
 * passkeys too.
 */
async function demoApp(
  admin: Admin,
  dataDir: string,
  hostUrl: string,
  chainUrl: string | null,
): Promise<ServerAppConfig> {
  const file = join(dataDir, DEMO_APP_FILE)
  const social = demoOAuth()
  if (social.providers.length > 0) say(`social sign-in: ${social.providers.join(', ')}`)
  const settings = {
    allowedOrigins: [hostUrl],
    loginMethods: ['wallet', 'email', 'sms', 'passkey', ...social.providers] as LoginMethod[],
    ...(social.providers.length > 0 ? { oauth: social.oauth } : {}),
    // Without a chain, an earlier start's anvil (long gone) must not stay the app's RPC.
    rpcUrls: { [String(DEMO_CHAIN_ID)]: chainUrl },
  }
  if (existsSync(file)) {
    try {
      const { id } = JSON.parse(readFileSync(file, 'utf8')) as { id?: unknown }
      if (typeof id === 'string') return await admin.updateApp(id, settings)
    } catch (error) {
      say(`the demo app in ${file} could not be reused (${String(error)}); creating a new one`)
    }
  }
  const app = await admin.createApp({
    name: 'Latch demo',
    ...settings,
    rpcUrls: chainUrl ? { [String(DEMO_CHAIN_ID)]: chainUrl } : {},
  })
  mkdirSync(dataDir, { recursive: true })
  writeFileSync(file, `${JSON.stringify({ id: app.id }, null, 2)}\n`)
  return app
}

async function main(): Promise<void> {
  const apiPort = port('LATCH_API_PORT', 8787)
  const modalPort = port('LATCH_MODAL_PORT', 8788)
  const hostPort = port('LATCH_HOST_PORT', 5173)
  const connectorPort = port('LATCH_CONNECTOR_PORT', 8789)
  const dataDir = resolve(process.env.LATCH_DATA_DIR?.trim() || '.latch')
  const modalUrl = `http://localhost:${modalPort}`

  const stops: { name: string; stop: () => Promise<unknown> }[] = []
  let stopping: Promise<void> | undefined
  const stopAll = () => {
    stopping ??= (async () => {
      for (const { name, stop } of stops.reverse()) {
        const timeout = new Promise((r) => setTimeout(r, 5000, 'timeout'))
        const outcome = await Promise.race([stop().then(() => 'ok'), timeout]).catch(
          (error: unknown) => `failed: ${String(error)}`,
        )
        if (outcome !== 'ok') say(`stopping the ${name}: ${outcome}`)
      }
    })()
    return stopping
  }
  // Ctrl-C can reach this process twice (from the terminal, and relayed by npm or a tsx
  // wrapper): every signal after the first joins the same stop instead of killing it midway.
  let signalled = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) return
    signalled = true
    say(`${signal}: stopping`)
    stopAll().then(
      () => process.exit(0),
      () => process.exit(1),
    )
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)

  try {
    say('building the host SDK, the modal app and the wallet frame…')
    const dirs = await buildFrontendOnce()

    // The same code as `latch serve`, on this run's build cache, with the database migrated
    // as every start of the demo always did.
    const latch = await serveLatch({
      env: {
        LATCH_API_HOST: '127.0.0.1',
        LATCH_API_PORT: String(apiPort),
        LATCH_MODAL_HOST: '127.0.0.1',
        LATCH_MODAL_PORT: String(modalPort),
        LATCH_MODAL_ORIGIN: modalUrl,
        // Coinbase Wallet's frame on an origin of its own: another host name than the modal's
        // and the page's (Chromium and Firefox resolve every *.localhost name to the loopback).
        LATCH_CONNECTOR_ORIGIN:
          process.env.LATCH_CONNECTOR_ORIGIN?.trim() || `http://connect.localhost:${connectorPort}`,
        LATCH_CONNECTOR_PORT: String(connectorPort),
        LATCH_DATA_DIR: dataDir,
        LATCH_WALLET_FRAME_DIR: dirs.walletFrame,
        LATCH_MODAL_DIR: dirs.modal,
        LATCH_SDK_DIR: dirs.sdk,
      },
      migrate: true,
      log: (line) => console.log(`[api] ${line}`),
      modalLog: () => {},
    })
    stops.push({ name: 'API and modal server', stop: () => latch.close() })
    const api = latch.api
    if (!api || !latch.modal) throw new Error('the API and the modal did not both start')
    say(`API        ${api.url}`)
    say(`modal      ${modalUrl}  (sdk.js, latch.js; passkeys for localhost)`)
    if (latch.modal.connector) say(`connector  ${latch.modal.connector.origin}  (Coinbase Wallet)`)

    const chain = await startDemoChain(say)
    if (chain) stops.push({ name: 'local chain (anvil)', stop: () => chain.stop() })
    const recipient = ANVIL_ACCOUNTS[1].address
    const demo: DemoPageConfig = {
      chain: chain
        ? {
            id: chain.chainId,
            name: getChain(chain.chainId)?.name ?? `chain ${chain.chainId}`,
            funding: '1 ETH',
            recipient,
            // Set once the sponsor is ready (below), before anyone opens the page.
            token: null,
          }
        : null,
    }

    let appId = ''
    const host = await startHostServer({
      modalUrl,
      port: hostPort,
      get appId() {
        return appId
      },
      demo,
    })
    stops.push({ name: 'demo host page', stop: () => host.close() })
    const app = await demoApp(api.admin, dataDir, host.url, chain?.url ?? null)
    appId = app.id
    say(`demo app   ${app.id} (${app.name}), allowed on ${host.url}`)
    if (chain && demo.chain) {
      const sponsor = await startDemoSponsor({ deps: api.deps, appId: app.id, anvil: chain, say })
      demo.chain.token = sponsor?.token ?? null
      const funder = await startFunder({
        deps: api.deps,
        appId: app.id,
        anvil: chain,
        say,
        token: sponsor?.token,
      })
      stops.push({ name: 'wallet funder', stop: () => funder.close() })
      say(`chain      ${chain.url} (anvil as chain ${chain.chainId})`)
      say(
        `funder     ${funder.url} (every in-app wallet gets 1 ETH${sponsor ? ' and 100 demo tokens' : ''}, told by a signed webhook)`,
      )
      if (sponsor) {
        say(
          `sponsor    ${sponsor.address} pays the gas of batches calling approve and transfer of the demo token ${sponsor.token}`,
        )
      }
    }
    say('')
    say(`Open ${host.url}/ and click Sign in (inline variant: ${host.url}/inline).`)
    say('Its settings switch the language and sign-in by phone; passkeys are on the landing.')
    say(
      process.env.SMTP_URL
        ? `E-mail codes go through ${process.env.SMTP_URL}.`
        : 'E-mail and SMS codes are printed below. Ctrl-C stops everything.',
    )
  } catch (error) {
    console.error(`[latch] could not start: ${error instanceof Error ? error.message : error}`)
    await stopAll()
    process.exit(1)
  }
}

await main()
