/**
 * The OAuth flags of `latch apps create` and `apps update`, kept apart from the rest of the
 * CLI: the CLI splits them off its arguments first, parses what is left, and applies them over
 * the app's settings.
 *
 *   --<provider>-client-id ID          --<provider>-client-secret SECRET
 *   --<provider>-client-secret -       (the secret from standard input)
 *   --<provider>-client-secret-file PATH    --<provider>-client-secret-env VAR
 *   --<provider>-issuer URL            --<provider>-authorization-url URL
 *   --<provider>-token-url URL         --<provider>-userinfo-url URL
 *   --<provider>-emails-url URL        --<provider>-jwks-url URL
 *   --apple-team-id ID  --apple-key-id ID  --apple-private-key-file AuthKey_XXXX.p8
 *
 * <provider> is google, twitter, discord, github or apple; `--flag=value` works too. A secret
 * given as an argument lands in the shell history and the process list (`ps`): the file,
 * environment and standard-input forms keep it out of both.
 */
import { readFileSync } from 'node:fs'
import { LatchError, OAUTH_PROVIDERS, type OAuthProvider } from '@latch/shared'
import {
  type EndpointOverrides,
  type OAuthSettings,
  type ProviderSettings,
  providerSettingsSchema,
} from './settings.ts'

const ENDPOINT_FLAGS: Record<string, keyof EndpointOverrides> = {
  issuer: 'issuer',
  'authorization-url': 'authorizationUrl',
  'token-url': 'tokenUrl',
  'userinfo-url': 'userInfoUrl',
  'emails-url': 'emailsUrl',
  'jwks-url': 'jwksUrl',
}

type TextField = 'clientId' | 'clientSecret' | 'appleTeamId' | 'appleKeyId'
const TEXT_FLAGS: Record<string, TextField> = {
  'client-id': 'clientId',
  'client-secret': 'clientSecret',
}
const APPLE_FLAGS: Record<string, TextField> = { 'team-id': 'appleTeamId', 'key-id': 'appleKeyId' }

/** Help text for the CLI's usage. */
export const OAUTH_FLAGS_HELP = `OAuth (per provider: google, twitter, discord, github, apple):
  --<provider>-client-id ID        --<provider>-client-secret SECRET
  --<provider>-client-secret-file PATH  --<provider>-client-secret-env VAR
  --<provider>-client-secret -     (read the secret from standard input)
    The file, variable or standard input keep the secret out of shell history and ps.
  --<provider>-issuer URL          --<provider>-authorization-url URL
  --<provider>-token-url URL       --<provider>-userinfo-url URL
  --<provider>-emails-url URL      --<provider>-jwks-url URL
  --apple-team-id ID --apple-key-id ID --apple-private-key-file AuthKey.p8
  Register <API URL>/api/v1/oauth/callback/<provider> as the redirect URI at each provider.`

/** One OAuth flag taken out of the arguments, its value read (standard input included). */
export interface OAuthFlag {
  provider: OAuthProvider
  /** The flag's name without its dashes, e.g. google-client-id. */
  name: string
  value: string
}

function invalid(message: string): LatchError {
  return LatchError.of('invalid_data', { message })
}

type Setter = (settings: Partial<ProviderSettings>, value: string) => void

/** Where secrets come from besides the arguments; the process's own by default. */
export interface SecretSources {
  /** All of standard input (read at most once). */
  stdin(): string
  env: Record<string, string | undefined>
}

const processSources: SecretSources = {
  stdin: () => readFileSync(0, 'utf8'),
  env: process.env,
}

/** A secret as stored: surrounding whitespace (a file's final newline) is not part of it. */
function secretText(raw: string, from: string): string {
  const value = raw.trim()
  if (!value) throw invalid(`${from} is empty`)
  return value
}

/** The setters of the client secret's safer forms: a file, an environment variable. */
function secretSetter(field: string, sources: SecretSources): Setter | undefined {
  if (field === 'client-secret-file') {
    return (s, path) => {
      let raw: string
      try {
        raw = readFileSync(path, 'utf8')
      } catch {
        throw invalid(`Cannot read the client secret file '${path}'`)
      }
      s.clientSecret = secretText(raw, `The client secret file '${path}'`)
    }
  }
  if (field === 'client-secret-env') {
    return (s, name) => {
      const raw = sources.env[name]
      if (raw === undefined) throw invalid(`The environment variable ${name} is not set`)
      s.clientSecret = secretText(raw, `The environment variable ${name}`)
    }
  }
  return undefined
}

/** The provider and setter of a flag name without its dashes, or undefined. */
function flagOf(
  name: string,
  sources: SecretSources,
): { provider: OAuthProvider; set: Setter } | undefined {
  const provider = OAUTH_PROVIDERS.find((p) => name.startsWith(`${p}-`))
  if (!provider) return undefined
  const field = name.slice(provider.length + 1)
  const secret = secretSetter(field, sources)
  if (secret) return { provider, set: secret }
  const key = TEXT_FLAGS[field] ?? (provider === 'apple' ? APPLE_FLAGS[field] : undefined)
  if (key) {
    return {
      provider,
      set: (s, v) => {
        s[key] = v
      },
    }
  }
  const endpoint = ENDPOINT_FLAGS[field]
  if (endpoint) {
    return {
      provider,
      set: (s, v) => {
        s.endpoints = { ...s.endpoints, [endpoint]: v }
      },
    }
  }
  if (provider !== 'apple') return undefined
  if (field === 'private-key-file') {
    return {
      provider,
      set: (s, path) => {
        try {
          s.applePrivateKey = readFileSync(path, 'utf8').trim()
        } catch {
          throw invalid(`Cannot read the Apple private key file '${path}'`)
        }
      },
    }
  }
  return undefined
}

/**
 * Takes the OAuth flags out of `args`, reading each value (standard input at most once); the
 * rest are the CLI's own arguments, in order.
 * @example splitOAuthFlags(['--google-client-id', 'abc', '--name', 'Demo'])
 *   // { flags: [{ provider: 'google', name: 'google-client-id', value: 'abc' }], rest: ['--name', 'Demo'] }
 */
export function splitOAuthFlags(
  args: readonly string[],
  sources: SecretSources = processSources,
): { flags: OAuthFlag[]; rest: string[] } {
  const flags: OAuthFlag[] = []
  const rest: string[] = []
  let stdinUsedBy: string | undefined
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg)
    const name = match?.[1]
    const flag = name ? flagOf(name, sources) : undefined
    if (!match || !name || !flag) {
      rest.push(arg)
      continue
    }
    let value = match[2]
    if (value === undefined) {
      value = args[i + 1]
      if (value === undefined || value.startsWith('--')) throw invalid(`${arg} needs a value`)
      i++
    }
    if (value === '-' && name.endsWith('-client-secret')) {
      // Standard input holds one value: a second '-' would silently get nothing.
      if (stdinUsedBy) throw invalid(`${stdinUsedBy} already reads standard input`)
      stdinUsedBy = `--${name}`
      value = secretText(sources.stdin(), 'The client secret on standard input')
    }
    flags.push({ provider: flag.provider, name, value })
  }
  return { flags, rest }
}

/**
 * Applies OAuth flags over the app's current settings: the complete settings of each provider
 * they touch (files and environment variables read here), checked.
 * @example applyOAuthFlags(app.oauth, splitOAuthFlags(argv).flags) // { google: { clientId: 'abc', ... } }
 */
export function applyOAuthFlags(
  current: OAuthSettings,
  flags: readonly OAuthFlag[],
  sources: SecretSources = processSources,
): OAuthSettings {
  const touched = new Map<OAuthProvider, Partial<ProviderSettings>>()
  for (const { provider, name, value } of flags) {
    let settings = touched.get(provider)
    if (!settings) {
      settings = structuredClone(current[provider] ?? {})
      touched.set(provider, settings)
    }
    flagOf(name, sources)?.set(settings, value)
  }
  const oauth: OAuthSettings = {}
  for (const [provider, settings] of touched) {
    const parsed = providerSettingsSchema.safeParse(settings)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      const where = issue?.path.join('.') || provider
      throw invalid(
        `Invalid ${provider} OAuth settings: ${where === 'clientId' ? `--${provider}-client-id is required` : `${where} ${issue?.message ?? ''}`}`.trim(),
      )
    }
    oauth[provider] = parsed.data
  }
  return oauth
}
