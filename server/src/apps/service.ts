/** Apps: what an operator configures (CLI, admin API) and what the modal reads. */
import {
  type AllowlistConfig,
  APP_ID_LENGTH,
  CHAINS,
  DEFAULT_CHAIN_IDS,
  isAppId,
  isSupportedChainId,
  LatchError,
  LOGIN_METHOD_FLAGS,
  LOGIN_METHODS,
  type LoginMethod,
  loginMethodFlags,
  OAUTH_PROVIDERS,
  type OAuthProvider,
  SERVER_DEFAULT_LOGIN_METHODS,
  type ServerAppConfig,
  type ServerCreateOnLogin,
  type ThemeSetting,
  validateEmail,
  validateOrigin,
  validatePhone,
} from '@latch/shared'
import type { Selectable } from 'kysely'
import { isSupportedCountry } from 'libphonenumber-js/min'
import { z } from 'zod'
import type { Deps } from '../context.ts'
import { randomId, type Secrets } from '../crypto.ts'
import { json } from '../db/index.ts'
import type { AppsTable } from '../db/schema.ts'
import { type OAuthSettings, oauthSettingsSchema, parseOAuthSettings } from '../oauth/settings.ts'
import { rowMac, rowMacHolds } from '../row-mac.ts'

export interface AppInput {
  name: string
  /** Host page origins, e.g. 'https://www.example.com'. */
  allowedOrigins: string[]
  /** Default: SERVER_DEFAULT_LOGIN_METHODS (e-mail and wallet). */
  loginMethods?: LoginMethod[]
  allowlist?: { enabled: boolean; entries: string[]; config?: AllowlistConfig }
  appearance?: {
    logoUrl?: string | null
    accentColor?: string | null
    theme?: ThemeSetting | null
    showWalletLoginFirst?: boolean
  }
  legal?: { termsAndConditionsUrl?: string | null; privacyPolicyUrl?: string | null }
  embeddedWalletConfig?: {
    createOnLogin?: ServerCreateOnLogin
    requireUserPasswordOnCreate?: boolean
  }
  walletConnectCloudProjectId?: string | null
  customApiUrl?: string | null
  oauth?: OAuthSettings
  /** Countries (ISO 3166 alpha-2, as libphonenumber names regions) SMS codes go to; default US. */
  smsCountries?: string[]
  /**
   * The app's own node per chain id (`{ "1": "https://…" }`), merged by chain; null removes a
   * chain's override. Kept sealed and never served to browsers: such URLs carry API keys.
   */
  rpcUrls?: Record<string, string | null>
  /** The chain ids the app's wallet may use (any of CHAINS); null goes back to Latch's default (DEFAULT_CHAIN_IDS). */
  chains?: number[] | null
}

/** An app as stored, with its secrets opened. */
export interface AppRecord {
  id: string
  name: string
  allowedOrigins: string[]
  loginMethods: LoginMethod[]
  allowlist: { enabled: boolean; entries: string[]; config: Required<AllowlistConfig> }
  appearance: {
    logoUrl: string | null
    accentColor: string | null
    theme: ThemeSetting | null
    showWalletLoginFirst: boolean
  }
  legal: { termsAndConditionsUrl: string | null; privacyPolicyUrl: string | null }
  embeddedWalletConfig: {
    createOnLogin: ServerCreateOnLogin
    requireUserPasswordOnCreate: boolean
  }
  walletConnectCloudProjectId: string | null
  customApiUrl: string | null
  oauth: OAuthSettings
  smsCountries: string[]
  /** Node URL per supported chain id (as a decimal string); chains not listed use the default. */
  rpcUrls: Record<string, string>
  /** The operator's chain list, or null for the default (appChainIds answers the one in force). */
  chains: number[] | null
  createdAt: Date
  updatedAt: Date
}

/** SMS goes to US numbers unless the operator adds countries: the modal parses numbers as US. */
export const DEFAULT_SMS_COUNTRIES: readonly string[] = ['US']

export const DEFAULT_LOGIN_METHODS: LoginMethod[] = LOGIN_METHODS.filter(
  (m) => SERVER_DEFAULT_LOGIN_METHODS[LOGIN_METHOD_FLAGS[m]],
)

const httpUrl = z
  .string()
  .max(2048)
  .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), 'must be an http(s) URL')
/**
 * A registered origin (validateOrigin): it becomes a CSP frame-ancestors source and the list
 * pages are matched against, so a wildcard, a path, a user name, a query or a fragment is
 * refused with the reason instead of being cut down to something the operator did not write.
 */
const origin = z
  .string()
  .max(2048)
  .transform((v, ctx) => {
    const checked = validateOrigin(v)
    if (checked.ok) return checked.value
    ctx.addIssue({ code: 'custom', message: checked.error.message })
    return z.NEVER
  })
const color = z
  .string()
  .regex(/^#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?$/, 'must be a #rgb or #rrggbb colour')
const text = z.string().max(1000)
const appPatchSchema = z
  .object({
    name: z.string().trim().min(1).max(200),
    allowedOrigins: z.array(origin).max(100),
    loginMethods: z
      .array(z.enum(LOGIN_METHODS))
      .min(1, 'You must enable at least one login method')
      .transform((v) => [...new Set(v)]),
    allowlist: z
      .object({
        enabled: z.boolean(),
        entries: z.array(z.string().max(320)).max(100_000),
        config: z
          .object({
            errorTitle: text.nullish(),
            errorDetail: text.nullish(),
            errorCtaText: text.nullish(),
            errorCtaLink: httpUrl.nullish(),
          })
          .strict()
          .optional(),
      })
      .strict(),
    appearance: z
      .object({
        logoUrl: httpUrl.nullish(),
        accentColor: color.nullish(),
        theme: z.union([z.literal('light'), z.literal('dark'), color]).nullish(),
        showWalletLoginFirst: z.boolean().optional(),
      })
      .strict(),
    legal: z
      .object({ termsAndConditionsUrl: httpUrl.nullish(), privacyPolicyUrl: httpUrl.nullish() })
      .strict(),
    embeddedWalletConfig: z
      .object({
        createOnLogin: z.enum(['off', 'all-users', 'users-without-wallets']).optional(),
        requireUserPasswordOnCreate: z.boolean().optional(),
      })
      .strict(),
    walletConnectCloudProjectId: z.string().max(128).nullish(),
    customApiUrl: httpUrl.nullish(),
    oauth: oauthSettingsSchema,
    smsCountries: z
      .array(
        z
          .string()
          .trim()
          .toUpperCase()
          .refine(
            (v) => /^[A-Z]{2}$/.test(v) && isSupportedCountry(v),
            'must list two-letter country codes such as US, CA or GB',
          ),
      )
      .min(1, 'must list at least one country (turn SMS off to send none)')
      .max(300)
      .transform((v) => [...new Set(v)]),
    rpcUrls: z.record(z.string(), httpUrl.nullable()).superRefine((urls, ctx) => {
      for (const key of Object.keys(urls)) {
        if (String(Number(key)) !== key || !isSupportedChainId(Number(key))) {
          ctx.addIssue({ code: 'custom', message: `${key}: Unsupported chainId`, path: [] })
        }
      }
    }),
    chains: z
      .array(
        z.number().refine((id) => isSupportedChainId(id), {
          message: `Unsupported chainId (known: ${CHAINS.map((c) => c.id).join(', ')})`,
        }),
      )
      .min(1, 'must list at least one chain')
      .max(CHAINS.length)
      .transform((v) => [...new Set(v)])
      .nullable(),
  })
  .strict()
  .partial()

function parsePatch(input: unknown): z.infer<typeof appPatchSchema> {
  const result = appPatchSchema.safeParse(input)
  if (!result.success) {
    const issue = result.error.issues[0]
    const where = issue?.path.join('.') || 'app'
    throw LatchError.of('invalid_data', {
      message: `Invalid app settings: ${where} ${issue?.message ?? ''}`.trim(),
    })
  }
  return result.data
}

/** Allowlist entries in the form identifiers take after validation. */
export function normalizeAllowlistEntry(entry: string): string {
  const value = entry.trim()
  if (/^0x[0-9a-fA-F]{40}$/.test(value)) return value.toLowerCase()
  if (value.includes('@')) {
    const email = validateEmail(value)
    if (email.ok) return email.value
  } else {
    const phone = validatePhone(value)
    if (phone.ok) return phone.value
  }
  throw LatchError.of('invalid_data', {
    message: `Allowlist entry '${value}' is not an e-mail address, a phone number or a wallet address`,
  })
}

type Row = Selectable<AppsTable>

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null
}

/**
 * The app as stored. Its allowed origins count only under their MAC (row-mac.ts): origins written
 * without the server secret are none, so no page is answered that the operator did not add.
 */
function toRecord(row: Row, deps: Pick<Deps, 'secrets' | 'log'>): AppRecord {
  const open = deps.secrets.decrypt
  const origins = row.allowed_origins as string[]
  const honoured = rowMacHolds(
    deps,
    'app_origins',
    { id: row.id, allowed_origins: origins },
    row.origins_mac,
    row.id,
  )
  const appearance = row.appearance as Record<string, unknown>
  const legal = row.legal as Record<string, unknown>
  const wallet = row.embedded_wallet_config as Record<string, unknown>
  const config = row.allowlist_config as Record<string, unknown>
  return {
    id: row.id,
    name: row.name,
    allowedOrigins: honoured ? origins : [],
    loginMethods: row.login_methods as LoginMethod[],
    allowlist: {
      enabled: row.allowlist_enabled,
      entries: row.allowlist_entries as string[],
      config: {
        errorTitle: str(config.errorTitle),
        errorDetail: str(config.errorDetail),
        errorCtaText: str(config.errorCtaText),
        errorCtaLink: str(config.errorCtaLink),
      },
    },
    appearance: {
      logoUrl: str(appearance.logoUrl),
      accentColor: str(appearance.accentColor),
      theme: str(appearance.theme) as ThemeSetting | null,
      showWalletLoginFirst: appearance.showWalletLoginFirst !== false,
    },
    legal: {
      termsAndConditionsUrl: str(legal.termsAndConditionsUrl),
      privacyPolicyUrl: str(legal.privacyPolicyUrl),
    },
    embeddedWalletConfig: {
      createOnLogin: (str(wallet.createOnLogin) ?? 'off') as ServerCreateOnLogin,
      requireUserPasswordOnCreate: wallet.requireUserPasswordOnCreate === true,
    },
    walletConnectCloudProjectId: row.wallet_connect_project_id,
    customApiUrl: row.custom_api_url,
    oauth: row.oauth_sealed ? parseOAuthSettings(JSON.parse(open(row.oauth_sealed))) : {},
    smsCountries: Array.isArray(row.sms_countries)
      ? row.sms_countries.filter((c): c is string => typeof c === 'string')
      : [...DEFAULT_SMS_COUNTRIES],
    rpcUrls: row.rpc_urls_sealed
      ? (JSON.parse(open(row.rpc_urls_sealed)) as Record<string, string>)
      : {},
    chains: Array.isArray(row.chains)
      ? row.chains.filter((id): id is number => isSupportedChainId(id))
      : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

function merge(base: AppRecord, patch: z.infer<typeof appPatchSchema>): AppRecord {
  const next: AppRecord = structuredClone(base)
  if (patch.name !== undefined) next.name = patch.name
  if (patch.allowedOrigins) next.allowedOrigins = [...new Set(patch.allowedOrigins)]
  if (patch.loginMethods) next.loginMethods = patch.loginMethods
  if (patch.allowlist) {
    next.allowlist.enabled = patch.allowlist.enabled
    next.allowlist.entries = [...new Set(patch.allowlist.entries.map(normalizeAllowlistEntry))]
    if (patch.allowlist.config) Object.assign(next.allowlist.config, patch.allowlist.config)
  }
  if (patch.appearance) Object.assign(next.appearance, patch.appearance)
  if (patch.legal) Object.assign(next.legal, patch.legal)
  if (patch.embeddedWalletConfig) {
    Object.assign(next.embeddedWalletConfig, patch.embeddedWalletConfig)
  }
  if (patch.walletConnectCloudProjectId !== undefined) {
    next.walletConnectCloudProjectId = patch.walletConnectCloudProjectId ?? null
  }
  if (patch.customApiUrl !== undefined) next.customApiUrl = patch.customApiUrl ?? null
  if (patch.oauth) next.oauth = { ...next.oauth, ...patch.oauth }
  if (patch.smsCountries) next.smsCountries = patch.smsCountries
  if (patch.chains !== undefined) next.chains = patch.chains
  if (patch.rpcUrls) {
    for (const [chainId, url] of Object.entries(patch.rpcUrls)) {
      if (url === null) delete next.rpcUrls[chainId]
      else next.rpcUrls[chainId] = url
    }
  }
  // Undefined from nullish inputs becomes null so the JSON columns stay uniform.
  for (const group of [next.appearance, next.legal, next.allowlist.config] as Record<
    string,
    unknown
  >[]) {
    for (const key of Object.keys(group)) if (group[key] === undefined) group[key] = null
  }
  return next
}

function toColumns(app: AppRecord, secrets: Secrets) {
  const seal = (plain: string) => secrets.encrypt(plain)
  return {
    name: app.name,
    allowed_origins: json(app.allowedOrigins),
    origins_mac: rowMac(secrets, 'app_origins', {
      id: app.id,
      allowed_origins: app.allowedOrigins,
    }),
    login_methods: json(app.loginMethods),
    allowlist_enabled: app.allowlist.enabled,
    allowlist_entries: json(app.allowlist.entries),
    allowlist_config: json(app.allowlist.config),
    appearance: json(app.appearance),
    legal: json(app.legal),
    embedded_wallet_config: json(app.embeddedWalletConfig),
    wallet_connect_project_id: app.walletConnectCloudProjectId,
    custom_api_url: app.customApiUrl,
    oauth_sealed: Object.keys(app.oauth).length > 0 ? seal(JSON.stringify(app.oauth)) : null,
    sms_countries: json(app.smsCountries),
    rpc_urls_sealed: Object.keys(app.rpcUrls).length > 0 ? seal(JSON.stringify(app.rpcUrls)) : null,
    chains: app.chains ? json(app.chains) : null,
    updated_at: app.updatedAt,
  }
}

type AppDeps = Pick<Deps, 'db' | 'secrets' | 'keys' | 'clock' | 'log'>

/** Creates an app with its signing keys. */
export async function createAppRecord(deps: AppDeps, input: AppInput): Promise<AppRecord> {
  const patch = parsePatch(input)
  if (patch.name === undefined)
    throw LatchError.of('invalid_data', { message: 'Invalid app settings: name is required' })
  const now = deps.clock.now()
  const blank: AppRecord = {
    id: randomId(APP_ID_LENGTH),
    name: patch.name,
    allowedOrigins: [],
    loginMethods: DEFAULT_LOGIN_METHODS,
    allowlist: {
      enabled: false,
      entries: [],
      config: { errorTitle: null, errorDetail: null, errorCtaText: null, errorCtaLink: null },
    },
    appearance: { logoUrl: null, accentColor: null, theme: null, showWalletLoginFirst: true },
    legal: { termsAndConditionsUrl: null, privacyPolicyUrl: null },
    embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: false },
    walletConnectCloudProjectId: null,
    customApiUrl: null,
    oauth: {},
    smsCountries: [...DEFAULT_SMS_COUNTRIES],
    rpcUrls: {},
    chains: null,
    createdAt: now,
    updatedAt: now,
  }
  const app = merge(blank, patch)
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('apps')
      .values({ id: app.id, created_at: now, ...toColumns(app, deps.secrets) })
      .execute()
    await deps.keys.ensureKeys(trx, app.id)
  })
  return app
}

/** Changes an app; fields left out keep their values, nested groups merge. */
export async function updateAppRecord(
  deps: AppDeps,
  id: string,
  input: Partial<AppInput>,
): Promise<AppRecord> {
  const patch = parsePatch(input)
  const updated = await deps.db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('apps')
      .selectAll()
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst()
    if (!row) throw LatchError.of('not_found', { message: `No app with id '${id}'` })
    const app = merge(toRecord(row, deps), patch)
    app.updatedAt = deps.clock.now()
    await trx.updateTable('apps').set(toColumns(app, deps.secrets)).where('id', '=', id).execute()
    return app
  })
  // After the commit, so the next read in this process sees the change at once.
  appCache(deps.db).delete(id)
  return updated
}

/**
 * How long a read app is reused without asking the database. Every request loads its app, and
 * that one statement was a third of a refresh's round trips. A change made in this process is
 * seen at once (updateAppRecord drops the entry); one made by another process (the CLI, a second
 * API process) within this long.
 */
export const APP_CACHE_MS = 2_000
/** Apps kept per database; past it the least recently read is dropped, so ids cannot grow it. */
export const APP_CACHE_SIZE = 1_000

type AppCache = Map<string, { app: AppRecord; until: number }>
/** Per database object, as tests run several servers in one process. */
const appCaches = new WeakMap<object, AppCache>()

function appCache(db: object): AppCache {
  let cache = appCaches.get(db)
  if (!cache) {
    cache = new Map()
    appCaches.set(db, cache)
  }
  return cache
}

/**
 * The app, or undefined; read from the database at most every APP_CACHE_MS per process. An
 * unknown id is not remembered, so an app another process just created is found at once.
 */
export async function findApp(
  deps: Pick<Deps, 'db' | 'secrets' | 'log'>,
  id: string,
): Promise<AppRecord | undefined> {
  if (!isAppId(id)) return undefined
  const cache = appCache(deps.db)
  const now = performance.now()
  const cached = cache.get(id)
  if (cached && cached.until > now) return cached.app
  const row = await deps.db.selectFrom('apps').selectAll().where('id', '=', id).executeTakeFirst()
  // Re-inserted at the end, so the map's first key is always the least recently read.
  cache.delete(id)
  if (!row) return undefined
  const app = toRecord(row, deps)
  cache.set(id, { app, until: now + APP_CACHE_MS })
  if (cache.size > APP_CACHE_SIZE) {
    const oldest = cache.keys().next().value
    if (oldest !== undefined) cache.delete(oldest)
  }
  return app
}

export async function listApps(deps: Pick<Deps, 'db' | 'secrets' | 'log'>): Promise<AppRecord[]> {
  const rows = await deps.db.selectFrom('apps').selectAll().orderBy('created_at').execute()
  return rows.map((row) => toRecord(row, deps))
}

/** The app's settings as the API answers them to the modal (`ServerAppConfig`). */
export async function toServerAppConfig(
  deps: Pick<Deps, 'keys'>,
  app: AppRecord,
): Promise<ServerAppConfig> {
  // A social provider works only once it has a client id (oauth/flow.ts refuses it before):
  // reported on without one, the modal would show a button that can only fail.
  const on = (m: LoginMethod) =>
    app.loginMethods.includes(m) &&
    (!OAUTH_PROVIDERS.includes(m as OAuthProvider) ||
      Boolean(app.oauth[m as OAuthProvider]?.clientId))
  return {
    id: app.id,
    name: app.name,
    verificationKey: await deps.keys.verificationKey(app.id),
    logoUrl: app.appearance.logoUrl,
    accentColor: app.appearance.accentColor,
    theme: app.appearance.theme,
    showWalletLoginFirst: app.appearance.showWalletLoginFirst,
    allowlistEnabled: app.allowlist.enabled,
    allowlistConfig: app.allowlist.config,
    ...loginMethodFlags(on),
    termsAndConditionsUrl: app.legal.termsAndConditionsUrl,
    privacyPolicyUrl: app.legal.privacyPolicyUrl,
    embeddedWalletConfig: app.embeddedWalletConfig,
    customApiUrl: app.customApiUrl,
    walletConnectCloudProjectId: app.walletConnectCloudProjectId,
    allowedOrigins: app.allowedOrigins,
    chains: appChainIds(app),
    smsCountries: [...app.smsCountries],
    createdAt: app.createdAt.toISOString(),
    updatedAt: app.updatedAt.toISOString(),
  }
}

/** The chain ids the app's wallet may use: the operator's list, else today's networks. */
export function appChainIds(app: Pick<AppRecord, 'chains'>): number[] {
  return app.chains ? [...app.chains] : [...DEFAULT_CHAIN_IDS]
}

/** Whether the identifier may sign in to the app (always, when the allowlist is off). */
export function isAllowed(app: AppRecord, identifier: string): boolean {
  return !app.allowlist.enabled || app.allowlist.entries.includes(identifier)
}

/** method_not_available unless the app has the method on. */
export function requireMethod(app: AppRecord, method: LoginMethod): void {
  if (!app.loginMethods.includes(method)) {
    throw LatchError.of('method_not_available')
  }
}
