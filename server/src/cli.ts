/**
 * The command line: `npm run latch -- serve` and `npm run latch -- apps ...`.
 * Run `npm run latch -- help` for the commands and options.
 */
import { parseArgs } from 'node:util'
import {
  BaseError,
  LOGIN_METHOD_FLAGS,
  LOGIN_METHODS,
  type ServerAppConfig,
  type ServerCreateOnLogin,
  SPEC_CHAIN_IDS,
  splitLoginMethods,
  type ThemeSetting,
} from '@latch/shared'
import type { Kysely } from 'kysely'
import { appSecretCommand } from './admin/cli.ts'
import { appsThroughServer } from './apps/operator-cli.ts'
import {
  type AppInput,
  type AppRecord,
  findApp,
  listApps,
  toServerAppConfig,
} from './apps/service.ts'
import type { CliIo } from './cli-io.ts'
import { ConfigError, type Env, loadConfig } from './config.ts'
import { createSecrets } from './crypto.ts'
import { openDatabase } from './db/index.ts'
import { openServices, type Services } from './index.ts'
import { applyOAuthFlags, OAUTH_FLAGS_HELP, type OAuthFlag, splitOAuthFlags } from './oauth/cli.ts'
import { cspCommand } from './ops/csp.ts'
import { migrationState, runMigrations } from './ops/migrations.ts'
import { secretCommand } from './ops/rotate.ts'
import { type RunningLatch, type ServeMode, serveLatch, shutdownTimeoutMs } from './ops/serve.ts'
import { sponsorCommand } from './sponsor/cli.ts'
import { delegateCommand } from './sponsor/delegate-cli.ts'
import { webhookCommand } from './webhooks/cli.ts'

export const USAGE = `Latch server

Usage: npm run latch -- <command> [options]

  serve [--migrate] [--api-only | --modal-only]
                                 Start the API (LATCH_API_PORT, default 8787) and the modal
                                 origin (LATCH_MODAL_PORT, default 8788) from the build of
                                 npm run build; --migrate (or LATCH_MIGRATE=1) updates the
                                 database schema first, otherwise a schema that is not current
                                 stops the start. SIGTERM drains requests, then exits
  migrate [--check]              Bring the database schema up to date; --check changes nothing
                                 and exits 1 when migrations are pending
  secret rotate [--check] [--batch <rows>] [--json]
                                 Seal every stored value again under LATCH_SECRET while
                                 LATCH_SECRET_PREVIOUS still opens them; resumable; --check
                                 exits 1 while any value is under the previous secret
  csp [--app <id>] [--modal-origin <url>] [--json]
                                 Print what a host page's Content-Security-Policy needs for
                                 Latch (modal origin: the flag, else LATCH_MODAL_ORIGIN)
  apps create --name <name> --origin <url> [--origin <url> ...] [settings] [--json]
                                 Create an app and print its 25-character id
  apps list [--json]             List the apps
  delegate address | deploy --chain <id> (--key-file <path> | --key-env <VAR>)
                                 Latch's EIP-7702 delegate (gas sponsoring) on a chain, at its
                                 deterministic address (npm run latch -- delegate help)
  sponsor create|list|policy --app <id> ...
                                 The account that pays an app's users' batches on a chain, and
                                 what it pays for (npm run latch -- sponsor help)
  apps <any command> ... --server <url>
                                 The same through a running server's operator API (key from
                                 LATCH_ADMIN_KEY or LATCH_ADMIN_KEY_FILE): on either database,
                                 every process applies the change within 2 s
  apps show <id> [--json]        Show an app's configuration
  apps update <id> [settings] [--json]
                                 Change an app's settings
  apps rotate-keys <id> [--json] Sign new tokens with the app's next key; the key it replaces
                                 keeps verifying until the following rotation
  apps secret create|list <id>, apps secret revoke <id> <secretId> [--json]
                                 The app's server secrets for the user API (/api/v1/admin),
                                 each printed once when created
  apps webhook add|list|remove|deliveries|replay ...
                                 Signed webhooks: endpoints, the delivery log, replays
                                 (npm run latch -- apps webhook help)

Settings (create and update):
  --name <name>
  --origin <url>                 Allowed host origin; repeat for several (replaces the list)
  --add-origin <url>, --remove-origin <url>
  --login-methods <list>         Comma-separated: ${LOGIN_METHODS.join(',')}
  --sms-countries <list>         Countries SMS codes go to, comma-separated two-letter codes
                                 (default US), e.g. US,CA; other numbers are refused
  --allowlist on|off             Turn the allowlist on or off
  --allow <entry>                Allowlist an e-mail, phone number or wallet address; repeatable
  --disallow <entry>             Remove an allowlist entry; repeatable
  --allowlist-title, --allowlist-detail, --allowlist-cta-text, --allowlist-cta-link <text>
  --logo <url>  --accent-color <#hex>  --theme light|dark|<#hex>  --wallet-first on|off
  --terms <url>  --privacy <url>
  --create-on-login off|all-users|users-without-wallets  --require-passcode on|off
  --wallet-connect-id <id>       --custom-api-url <url>
  --chains <ids>|default|spec    Chain ids the app's wallet may use, comma-separated, e.g.
                                 8453,84532 (Base, Base Sepolia); default: today's networks
                                 (the mainnets, Sepolia and its rollups, Polygon Amoy,
                                 Filecoin Calibration); spec: SPEC's list, shut-down test
                                 networks included
  --rpc-url <chainId>=<url>      The app's own node for a chain (kept sealed, never sent to
                                 browsers); repeatable; <chainId>= with no URL drops it
  --oauth-json <json>            Per-provider OAuth settings, merged by provider, e.g.
                                 '{"google":{"clientId":"...","clientSecret":"..."}}'

${OAUTH_FLAGS_HELP}

The database and secret come from the same environment as \`serve\` (LATCH_DATA_DIR, DATABASE_URL,
LATCH_SECRET). PGlite serves one process: stop the server before changing apps, or use PostgreSQL.
`

const options = {
  name: { type: 'string' },
  origin: { type: 'string', multiple: true },
  'add-origin': { type: 'string', multiple: true },
  'remove-origin': { type: 'string', multiple: true },
  'login-methods': { type: 'string' },
  'sms-countries': { type: 'string' },
  allowlist: { type: 'string' },
  allow: { type: 'string', multiple: true },
  disallow: { type: 'string', multiple: true },
  'allowlist-title': { type: 'string' },
  'allowlist-detail': { type: 'string' },
  'allowlist-cta-text': { type: 'string' },
  'allowlist-cta-link': { type: 'string' },
  logo: { type: 'string' },
  'accent-color': { type: 'string' },
  theme: { type: 'string' },
  'wallet-first': { type: 'string' },
  terms: { type: 'string' },
  privacy: { type: 'string' },
  'create-on-login': { type: 'string' },
  'require-passcode': { type: 'string' },
  'wallet-connect-id': { type: 'string' },
  'custom-api-url': { type: 'string' },
  'rpc-url': { type: 'string', multiple: true },
  chains: { type: 'string' },
  'oauth-json': { type: 'string' },
  json: { type: 'boolean' },
  migrate: { type: 'boolean' },
  check: { type: 'boolean' },
  'api-only': { type: 'boolean' },
  'modal-only': { type: 'boolean' },
  app: { type: 'string' },
  'modal-origin': { type: 'string' },
  server: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

export class UsageError extends BaseError {
  override readonly name = 'UsageError'
}

type Values = ReturnType<
  typeof parseArgs<{ options: typeof options; allowPositionals: true }>
>['values']

function onOff(value: string | undefined, flag: string): boolean | undefined {
  if (value === undefined) return undefined
  if (['on', 'true', 'yes', '1'].includes(value)) return true
  if (['off', 'false', 'no', '0'].includes(value)) return false
  throw new UsageError(`--${flag} takes on or off, not '${value}'`)
}

/** The patch the options describe, applied on top of `current` for list edits. */
export function settingsFromOptions(
  v: Values,
  current?: Pick<AppRecord, 'allowedOrigins'> & {
    allowlist: Pick<AppRecord['allowlist'], 'enabled' | 'entries'>
  },
): Partial<AppInput> {
  const patch: Partial<AppInput> = {}
  if (v.name !== undefined) patch.name = v.name
  if (v.origin || v['add-origin'] || v['remove-origin']) {
    let origins = v.origin ?? current?.allowedOrigins ?? []
    origins = [...origins, ...(v['add-origin'] ?? [])]
    const remove = new Set((v['remove-origin'] ?? []).map((o) => safeOrigin(o)))
    patch.allowedOrigins = origins.filter((o) => !remove.has(safeOrigin(o)))
  }
  if (v['login-methods'] !== undefined) {
    const { methods, unknown } = splitLoginMethods(v['login-methods'])
    if (unknown.length) throw new UsageError(`Unknown login method(s): ${unknown.join(', ')}`)
    patch.loginMethods = methods
  }
  if (v['sms-countries'] !== undefined) {
    // Checked as app settings: an unknown code answers 'Invalid app settings: smsCountries...'.
    patch.smsCountries = v['sms-countries']
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean)
  }
  const enabled = onOff(v.allowlist, 'allowlist')
  const config = {
    ...(v['allowlist-title'] !== undefined && { errorTitle: v['allowlist-title'] }),
    ...(v['allowlist-detail'] !== undefined && { errorDetail: v['allowlist-detail'] }),
    ...(v['allowlist-cta-text'] !== undefined && { errorCtaText: v['allowlist-cta-text'] }),
    ...(v['allowlist-cta-link'] !== undefined && { errorCtaLink: v['allowlist-cta-link'] }),
  }
  if (enabled !== undefined || v.allow || v.disallow || Object.keys(config).length) {
    const drop = new Set((v.disallow ?? []).map((e) => e.trim().toLowerCase()))
    const entries = [...(current?.allowlist.entries ?? []), ...(v.allow ?? [])].filter(
      (e) => !drop.has(e.trim().toLowerCase()),
    )
    patch.allowlist = { enabled: enabled ?? current?.allowlist.enabled ?? false, entries, config }
  }
  const appearance = {
    ...(v.logo !== undefined && { logoUrl: v.logo }),
    ...(v['accent-color'] !== undefined && { accentColor: v['accent-color'] }),
    ...(v.theme !== undefined && { theme: v.theme as ThemeSetting }),
    ...(v['wallet-first'] !== undefined && {
      showWalletLoginFirst: onOff(v['wallet-first'], 'wallet-first'),
    }),
  }
  if (Object.keys(appearance).length) patch.appearance = appearance
  const legal = {
    ...(v.terms !== undefined && { termsAndConditionsUrl: v.terms }),
    ...(v.privacy !== undefined && { privacyPolicyUrl: v.privacy }),
  }
  if (Object.keys(legal).length) patch.legal = legal
  const wallet = {
    ...(v['create-on-login'] !== undefined && {
      createOnLogin: v['create-on-login'] as ServerCreateOnLogin,
    }),
    ...(v['require-passcode'] !== undefined && {
      requireUserPasswordOnCreate: onOff(v['require-passcode'], 'require-passcode'),
    }),
  }
  if (Object.keys(wallet).length) patch.embeddedWalletConfig = wallet
  if (v['wallet-connect-id'] !== undefined)
    patch.walletConnectCloudProjectId = v['wallet-connect-id']
  if (v['custom-api-url'] !== undefined) patch.customApiUrl = v['custom-api-url']
  if (v['rpc-url']) {
    // Checked as app settings: an unknown chain answers '... Unsupported chainId'.
    const urls: Record<string, string | null> = {}
    for (const entry of v['rpc-url']) {
      const at = entry.indexOf('=')
      if (at <= 0) throw new UsageError(`--rpc-url takes <chainId>=<url>, not '${entry}'`)
      const url = entry.slice(at + 1).trim()
      urls[entry.slice(0, at).trim()] = url === '' ? null : url
    }
    patch.rpcUrls = urls
  }
  if (v.chains !== undefined) {
    // Checked as app settings: an unknown chain answers '... Unsupported chainId (known: ...)'.
    const list = v.chains.trim()
    const ids = list
      .split(',')
      .map((id) => id.trim())
      .filter(Boolean)
    const named = list === 'default' || list === 'spec'
    if (!named && ids.some((id) => !/^[0-9]{1,10}$/.test(id))) {
      throw new UsageError(
        `--chains takes chain ids such as 8453,84532, default or spec, not '${list}'`,
      )
    }
    // 'default' follows Latch's list as it changes; 'spec' is stored as the ids it names.
    patch.chains =
      list === 'default' ? null : list === 'spec' ? [...SPEC_CHAIN_IDS] : ids.map(Number)
  }
  if (v['oauth-json'] !== undefined) {
    try {
      patch.oauth = JSON.parse(v['oauth-json']) as AppInput['oauth']
    } catch {
      throw new UsageError('--oauth-json is not valid JSON')
    }
  }
  return patch
}

function safeOrigin(value: string): string {
  return URL.canParse(value) ? new URL(value).origin : value
}

/** What the CLI prints: the app's configuration, with the server-only settings it knows. */
export type AppView = ServerAppConfig & {
  /** Chains with the app's own node; the URLs are not printed (they may carry API keys). */
  rpcUrlChains?: readonly number[]
}

/** The server-only settings the CLI shows beside the public configuration. */
function serverSettings(app: AppRecord | undefined): Omit<AppView, keyof ServerAppConfig> {
  return {
    rpcUrlChains: Object.keys(app?.rpcUrls ?? {}).map(Number),
  }
}

/** A person-readable view of an app. */
export function describeApp(app: AppView): string {
  const methods = LOGIN_METHODS.filter((m) => app[LOGIN_METHOD_FLAGS[m]])
  const rows: [string, string][] = [
    ['id', app.id],
    ['name', app.name],
    ['allowed origins', app.allowedOrigins.join(', ') || '(none)'],
    ['login methods', methods.join(', ')],
    ['allowlist', app.allowlistEnabled ? 'on' : 'off'],
    ['logo', app.logoUrl ?? '-'],
    ['accent color', app.accentColor ?? '-'],
    ['theme', app.theme ?? '-'],
    ['wallet login first', app.showWalletLoginFirst ? 'yes' : 'no'],
    ['terms', app.termsAndConditionsUrl ?? '-'],
    ['privacy policy', app.privacyPolicyUrl ?? '-'],
    ['create wallet on login', app.embeddedWalletConfig.createOnLogin],
    ['require passcode', app.embeddedWalletConfig.requireUserPasswordOnCreate ? 'yes' : 'no'],
    ['chains', app.chains.join(', ')],
    ['sms countries', app.smsCountries.join(', ')],
    ...(app.rpcUrlChains
      ? [['own rpc nodes', app.rpcUrlChains.join(', ') || '-'] as [string, string]]
      : []),
    ['created', app.createdAt],
    ['updated', app.updatedAt],
  ]
  const width = Math.max(...rows.map(([k]) => k.length))
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n')
}

type Parsed = ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>

/** argv as options and positionals, with the OAuth flags taken out; what is wrong when it does not parse. */
function parseCommand(argv: string[]): { parsed: Parsed; oauthFlags: OAuthFlag[] } | string {
  try {
    // The OAuth flags (--google-client-id, ...) belong to the OAuth feature; it takes them out
    // here and they are applied over the app's settings.
    const split = splitOAuthFlags(argv)
    const parsed = parseArgs({ args: split.rest, options, allowPositionals: true, strict: true })
    return { parsed, oauthFlags: split.flags }
  } catch (e) {
    return (e as Error).message
  }
}

const APP_COMMANDS = ['create', 'list', 'show', 'update', 'rotate-keys']

/** An `apps` command as parsed. */
interface AppsCommand {
  sub: string
  id: string | undefined
  v: Values
  oauthFlags: OAuthFlag[]
}

/** Runs one command; resolves with the exit code (serve resolves when the server stops). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  if (argv[0] === 'apps' && argv[1] === 'webhook') return webhookCommand(argv.slice(2), io)
  if (argv[0] === 'secret') return secretCommand(argv.slice(1), io)
  if (argv[0] === 'delegate') return delegateCommand(argv.slice(1), io)
  if (argv[0] === 'sponsor') return sponsorCommand(argv.slice(1), io)
  const parsed = parseCommand(argv)
  if (typeof parsed === 'string') {
    io.err(`${parsed}\n\n${USAGE}`)
    return 2
  }
  const { values: v, positionals } = parsed.parsed
  const [command, sub, id] = positionals
  if (v.help || !command || command === 'help') {
    io.out(USAGE)
    return command || v.help ? 0 : 2
  }

  if (command === 'serve') return serve(v, io)
  if (command === 'migrate') return migrateCommand(v.check === true, io)
  if (command === 'csp') {
    return cspCommand({ app: v.app, modalOrigin: v['modal-origin'], json: v.json }, io)
  }
  if (command === 'apps' && sub === 'secret')
    return appSecretCommand(positionals.slice(2), v.json === true, io, v.server)

  if (command !== 'apps' || !sub || !APP_COMMANDS.includes(sub)) {
    io.err(`Unknown command: ${positionals.join(' ')}\n\n${USAGE}`)
    return 2
  }
  const apps: AppsCommand = { sub, id, v, oauthFlags: parsed.oauthFlags }
  return v.server === undefined ? appsOnDatabase(apps, io) : appsOnServer(v.server, apps, io)
}

/** Runs an `apps` command: a UsageError prints the usage (exit 2), any other error exits 1. */
async function reportingErrors(io: CliIo, run: () => Promise<number>): Promise<number> {
  try {
    return await run()
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`${e.message}\n\n${USAGE}`)
      return 2
    }
    io.err(`Error: ${(e as Error).message}`)
    return 1
  }
}

function requireCreateSettings(v: Values): void {
  if (!v.name) throw new UsageError('apps create needs --name')
  if (!v.origin?.length) throw new UsageError('apps create needs at least one --origin')
}

/** A running server's operator API instead of the database (apps/operator-cli.ts). */
function appsOnServer(server: string, cmd: AppsCommand, io: CliIo): Promise<number> {
  const { sub, id, v, oauthFlags } = cmd
  return reportingErrors(io, () => {
    if (sub === 'create') requireCreateSettings(v)
    return appsThroughServer(
      {
        server,
        sub,
        id,
        json: v.json === true,
        oauthFlags,
        settings: (current) => settingsFromOptions(v, current),
        describe: describeApp,
      },
      io,
    )
  })
}

async function appsOnDatabase(cmd: AppsCommand, io: CliIo): Promise<number> {
  const services = await openServices({ env: io.env, log: io.err })
  try {
    return await reportingErrors(io, async () => {
      if (cmd.sub === 'create') return createAppCommand(services, cmd, io)
      if (cmd.sub === 'list') return listAppsCommand(services, cmd.v.json === true, io)
      return existingAppCommand(services, cmd, io)
    })
  } finally {
    await services.close()
  }
}

/** The public configuration leaves out server-only settings; the stored app has them. */
async function withServerSettings(services: Services, app: ServerAppConfig): Promise<AppView> {
  return { ...app, ...serverSettings(await findApp(services.deps, app.id)) }
}

function printApp(io: CliIo, json: boolean | undefined, app: AppView, note: string): void {
  io.out(json ? JSON.stringify(app, null, 2) : `${note}\n${describeApp(app)}`)
}

async function createAppCommand(services: Services, cmd: AppsCommand, io: CliIo): Promise<number> {
  const { v, oauthFlags } = cmd
  requireCreateSettings(v)
  const input = settingsFromOptions(v) as AppInput
  if (oauthFlags.length > 0) {
    input.oauth = { ...input.oauth, ...applyOAuthFlags({}, oauthFlags) }
  }
  const app = await services.admin.createApp(input)
  printApp(io, v.json, await withServerSettings(services, app), `Created app ${app.id}`)
  return 0
}

async function listAppsCommand(services: Services, json: boolean, io: CliIo): Promise<number> {
  const apps = await Promise.all(
    (await listApps(services.deps)).map((a) => toServerAppConfig(services.deps, a)),
  )
  if (json) {
    io.out(JSON.stringify(apps, null, 2))
  } else if (apps.length === 0) {
    io.out(
      'No apps yet. Create one with: npm run latch -- apps create --name <name> --origin <url>',
    )
  } else {
    const width = Math.max(...apps.map((a) => a.name.length), 4)
    io.out(`${'ID'.padEnd(25)}  ${'NAME'.padEnd(width)}  ORIGINS`)
    for (const a of apps) io.out(`${a.id}  ${a.name.padEnd(width)}  ${a.allowedOrigins.join(', ')}`)
  }
  return 0
}

/** show, update and rotate-keys: of an app that must exist. */
async function existingAppCommand(
  services: Services,
  cmd: AppsCommand,
  io: CliIo,
): Promise<number> {
  const { sub, id, v, oauthFlags } = cmd
  if (!id) throw new UsageError(`apps ${sub} needs an app id`)
  const current = await findApp(services.deps, id)
  if (!current) {
    io.err(`No app with id '${id}'`)
    return 1
  }
  if (sub === 'show') {
    printApp(
      io,
      v.json,
      { ...(await toServerAppConfig(services.deps, current)), ...serverSettings(current) },
      '',
    )
    return 0
  }
  if (sub === 'rotate-keys') return rotateKeysCommand(services, id, v.json === true, io)
  const patch = settingsFromOptions(v, current)
  if (oauthFlags.length > 0) {
    patch.oauth = { ...patch.oauth, ...applyOAuthFlags(current.oauth, oauthFlags) }
  }
  if (Object.keys(patch).length === 0)
    throw new UsageError('apps update needs at least one setting')
  printApp(
    io,
    v.json,
    await withServerSettings(services, await services.admin.updateApp(id, patch)),
    `Updated app ${id}`,
  )
  return 0
}

async function rotateKeysCommand(
  services: Services,
  id: string,
  json: boolean,
  io: CliIo,
): Promise<number> {
  const { keys } = services.deps
  // jwks() lists the current key first.
  const kidOf = async () => (await keys.jwks(id)).keys[0]?.kid ?? null
  const previous = await kidOf()
  await keys.rotate(id)
  const signing = await kidOf()
  io.out(
    json
      ? JSON.stringify({ id, signingKey: signing, previousKey: previous }, null, 2)
      : `Rotated the signing keys of app ${id}: new tokens are signed with key ${signing}. ` +
          `Key ${previous} keeps verifying the tokens it signed until the next rotation. ` +
          'A running server signs with the new key within 5 minutes.',
  )
  return 0
}

/** `serve`: runs until SIGINT or SIGTERM, then drains within LATCH_SHUTDOWN_TIMEOUT_MS. */
async function serve(v: Values, io: CliIo): Promise<number> {
  if (v['api-only'] && v['modal-only']) {
    io.err(`--api-only and --modal-only exclude each other\n\n${USAGE}`)
    return 2
  }
  const mode: ServeMode = v['api-only'] ? 'api' : v['modal-only'] ? 'modal' : 'all'
  let latch: RunningLatch
  try {
    latch = await serveLatch({ env: io.env, mode, migrate: v.migrate === true, log: io.out })
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e
    io.err(`Error: ${e.message}`)
    return 1
  }
  const { api, modal } = latch
  if (api) {
    const config = api.deps.config
    latch.log(`Latch API listening on ${api.url}`)
    latch.log(
      config.modalOrigin
        ? `CORS admits ${config.modalOrigin}`
        : 'LATCH_MODAL_ORIGIN is not set: no browser origin may call the API',
    )
  }
  if (modal) latch.log(`Latch modal listening on ${modal.url} (API ${latch.apiPublicUrl})`)
  const deadline = shutdownTimeoutMs({ ...process.env, ...io.env })
  const inTime = await new Promise<boolean>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      latch.log(`${signal}: finishing requests under way (at most ${deadline} ms)`)
      void latch.shutdown(deadline).then(resolve)
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
  latch.log(inTime ? 'Stopped' : 'Stopped: requests still open at the deadline were cut')
  return 0
}

/** `migrate [--check]`: opens the database without migrating it, then migrates or reports. */
async function migrateCommand(check: boolean, io: CliIo): Promise<number> {
  const env: Env = { ...process.env, ...io.env }
  const config = loadConfig(env)
  const database = await openDatabase(config, { migrate: false })
  try {
    const db = database.db as Kysely<unknown>
    if (check) {
      const { applied, pending } = await migrationState(db)
      if (pending.length === 0) {
        io.out(`The database schema is current (${applied.length} migrations)`)
        return 0
      }
      io.out(`${pending.length} migration(s) pending: ${pending.join(', ')}`)
      return 1
    }
    const ran = await runMigrations(db, createSecrets(config.secret, config.secretPrevious))
    io.out(
      ran.length === 0
        ? 'The database schema was already current'
        : `Ran ${ran.length} migration(s): ${ran.join(', ')}`,
    )
    return 0
  } finally {
    await database.close()
  }
}

/** Runs one command as the process: its output on stdout and stderr, its exit code the process's. */
export function main(argv: string[]): void {
  runCli(argv, {
    out: (t) => console.log(t),
    err: (t) => console.error(t),
    env: {},
  }).then(
    (code) => {
      process.exitCode = code
    },
    (e: unknown) => {
      console.error(`Error: ${(e as Error).message}`)
      process.exitCode = 1
    },
  )
}

const isMain =
  import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('/cli.ts')
if (isMain) main(process.argv.slice(2))
