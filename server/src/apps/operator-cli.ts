/**
 * `latch apps create|list|show|update … --server <url>`: the same commands, through a running
 * server's operator API (apps/operator.ts) instead of the database, with the key from
 * LATCH_ADMIN_KEY or LATCH_ADMIN_KEY_FILE. The settings are built from the flags exactly as
 * the local commands build them; list edits (`--add-origin`, `--allow`, …) start from what the
 * server answers for the app.
 */
import { readFileSync } from 'node:fs'
import { API_PREFIX, BaseError } from '@latch/shared'
import type { CliIo } from '../cli-io.ts'
import type { Env } from '../config.ts'
import { applyOAuthFlags, type OAuthFlag } from '../oauth/cli.ts'
import type { OAuthSettings } from '../oauth/settings.ts'
import type { OperatorApp, RedactedOAuth } from './operator.ts'
import type { AppInput } from './service.ts'

/** What the command needs from cli.ts, passed in so this file does not import it back. */
export interface OperatorCommand {
  server: string
  sub: string
  id: string | undefined
  json: boolean
  oauthFlags: readonly OAuthFlag[]
  settings(current?: {
    allowedOrigins: string[]
    allowlist: { enabled: boolean; entries: string[] }
  }): Partial<AppInput>
  describe(app: OperatorApp): string
}

const TIMEOUT_MS = 15_000

/** A refusal to print and exit 1 on; `status` is the server's HTTP answer when it gave one. */
export class OperatorCliError extends BaseError {
  override readonly name = 'OperatorCliError'
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message)
  }
}

/**
 * Whether the server found what `call` addressed: true once it answers, false on its 404, and
 * any other refusal thrown on.
 */
export async function found(call: Promise<unknown>): Promise<boolean> {
  try {
    await call
    return true
  } catch (e) {
    if (e instanceof OperatorCliError && e.status === 404) return false
    throw e
  }
}

/** The operator key from the environment or its file, trimmed; not both. */
export function adminKeyFromEnv(env: Env): string {
  const inline = env.LATCH_ADMIN_KEY?.trim() || null
  const file = env.LATCH_ADMIN_KEY_FILE?.trim() || null
  if (inline && file)
    throw new OperatorCliError('Set LATCH_ADMIN_KEY or LATCH_ADMIN_KEY_FILE, not both')
  if (file) {
    try {
      const key = readFileSync(file, 'utf8').trim()
      if (key) return key
    } catch (e) {
      throw new OperatorCliError(
        `LATCH_ADMIN_KEY_FILE: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
      )
    }
    throw new OperatorCliError(`LATCH_ADMIN_KEY_FILE: ${file} is empty`)
  }
  if (!inline) {
    throw new OperatorCliError(
      '--server needs the operator key in LATCH_ADMIN_KEY or LATCH_ADMIN_KEY_FILE (the one the server was started with)',
    )
  }
  return inline
}

/** The stored OAuth settings as the flags edit them: the secrets stay on the server. */
function editable(oauth: RedactedOAuth): OAuthSettings {
  const out: OAuthSettings = {}
  for (const [provider, settings] of Object.entries(oauth) as [
    keyof RedactedOAuth,
    RedactedOAuth[keyof RedactedOAuth],
  ][]) {
    if (!settings) continue
    const { clientSecretSet: _s, applePrivateKeySet: _k, ...rest } = settings
    out[provider] = rest as OAuthSettings[typeof provider]
  }
  return out
}

/** Calls of a running server's operator API (`/api/v1/operator/apps…`) with the operator key. */
export function operatorClient(
  server: string,
  env: Env,
): <T>(path: string, body?: unknown) => Promise<T> {
  if (!URL.canParse(server) || !/^https?:$/.test(new URL(server).protocol)) {
    throw new OperatorCliError(
      `--server takes the API's URL (https://api.example.com), not '${server}'`,
    )
  }
  const key = adminKeyFromEnv(env)
  const base = `${server.replace(/\/+$/, '')}${API_PREFIX}/operator/apps`

  return async function call<T>(path: string, body?: unknown): Promise<T> {
    let res: Response
    try {
      res = await fetch(`${base}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      })
    } catch (e) {
      throw new OperatorCliError(`Cannot reach ${server}: ${(e as Error).message}`)
    }
    const text = await res.text()
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = undefined
    }
    if (!res.ok) {
      const error = (parsed as { error?: { message?: unknown } } | undefined)?.error
      const requestId = (parsed as { requestId?: unknown } | undefined)?.requestId
      const message = typeof error?.message === 'string' ? error.message : `HTTP ${res.status}`
      throw new OperatorCliError(
        `${server} answered ${res.status}: ${message}${typeof requestId === 'string' ? ` (request ${requestId})` : ''}`,
        res.status,
      )
    }
    return parsed as T
  }
}

export async function appsThroughServer(cmd: OperatorCommand, io: CliIo): Promise<number> {
  const call = operatorClient(cmd.server, { ...process.env, ...io.env })

  const print = (app: OperatorApp, note: string) =>
    io.out(cmd.json ? JSON.stringify(app, null, 2) : `${note}\n${cmd.describe(app)}`)

  switch (cmd.sub) {
    case 'list': {
      const { apps } = await call<{ apps: OperatorApp[] }>('')
      if (cmd.json) io.out(JSON.stringify(apps, null, 2))
      else if (apps.length === 0) io.out('No apps yet.')
      else {
        const width = Math.max(...apps.map((a) => a.name.length), 4)
        io.out(`${'ID'.padEnd(25)}  ${'NAME'.padEnd(width)}  ORIGINS`)
        for (const a of apps)
          io.out(`${a.id}  ${a.name.padEnd(width)}  ${a.allowedOrigins.join(', ')}`)
      }
      return 0
    }
    case 'create': {
      const input = cmd.settings()
      if (cmd.oauthFlags.length > 0) {
        input.oauth = { ...input.oauth, ...applyOAuthFlags({}, cmd.oauthFlags) }
      }
      const app = await call<OperatorApp>('', input)
      print(app, `Created app ${app.id} on ${cmd.server}`)
      return 0
    }
    case 'show':
    case 'update': {
      if (!cmd.id) throw new OperatorCliError(`apps ${cmd.sub} needs an app id`)
      const path = `/${encodeURIComponent(cmd.id)}`
      const current = await call<OperatorApp>(path)
      if (cmd.sub === 'show') {
        print(current, '')
        return 0
      }
      const patch = cmd.settings({
        allowedOrigins: [...current.allowedOrigins],
        allowlist: { enabled: current.allowlistEnabled, entries: [...current.allowlistEntries] },
      })
      if (cmd.oauthFlags.length > 0) {
        patch.oauth = {
          ...patch.oauth,
          ...applyOAuthFlags(editable(current.oauth), cmd.oauthFlags),
        }
      }
      if (Object.keys(patch).length === 0) {
        throw new OperatorCliError('apps update needs at least one setting')
      }
      print(await call<OperatorApp>(path, patch), `Updated app ${cmd.id} on ${cmd.server}`)
      return 0
    }
    case 'rotate-keys': {
      if (!cmd.id) throw new OperatorCliError('apps rotate-keys needs an app id')
      const rotated = await call<{ id: string; signingKey: string; previousKey: string | null }>(
        `/${encodeURIComponent(cmd.id)}/rotate-keys`,
        {},
      )
      io.out(
        cmd.json
          ? JSON.stringify(rotated, null, 2)
          : `Rotated the signing keys of app ${cmd.id} on ${cmd.server}: new tokens are signed with key ${rotated.signingKey}.`,
      )
      return 0
    }
    default:
      throw new OperatorCliError(`Unknown command: apps ${cmd.sub}`)
  }
}
