/** `latch apps secret create|list|revoke <appId> [<secretId>]`: an app's server secrets. */

import { found, OperatorCliError, operatorClient } from '../apps/operator-cli.ts'
import { findApp } from '../apps/service.ts'
import type { CliIo } from '../cli-io.ts'
import { openServices } from '../index.ts'
import { type AppSecretInfo, createAppSecret, listAppSecrets, revokeAppSecret } from './secrets.ts'

export const SECRET_USAGE = `Usage: npm run latch -- apps secret <command> [--json]

  apps secret create <appId>             Create a server secret for the app's backend; it is
                                         printed once, only its hash is kept
  apps secret list <appId>               List the app's secrets (ids, created, last used, revoked)
  apps secret revoke <appId> <secretId>  Revoke a secret at once

  With --server <url>, through that running server's operator API (LATCH_ADMIN_KEY).
`

/** What a secret command reaches: the database, or a running server's operator API. */
interface SecretStore {
  exists(appId: string): Promise<boolean>
  create(appId: string): Promise<{ secret: string } & AppSecretInfo>
  list(appId: string): Promise<AppSecretInfo[]>
  revoke(appId: string, secretId: string): Promise<boolean>
}

function serverStore(server: string, io: CliIo): SecretStore {
  const call = operatorClient(server, { ...process.env, ...io.env })
  const app = (appId: string) => `/${encodeURIComponent(appId)}`
  return {
    exists: (appId) => found(call(app(appId))),
    create: (appId) => call(`${app(appId)}/secrets`, {}),
    list: async (appId) =>
      (await call<{ secrets: AppSecretInfo[] }>(`${app(appId)}/secrets`)).secrets,
    revoke: (appId, secretId) =>
      found(call(`${app(appId)}/secrets/${encodeURIComponent(secretId)}/revoke`, {})),
  }
}

/**
 * Runs one `apps secret` command (`args` follow `apps secret`), on the database or, with
 * `server`, through that server's operator API; resolves with the exit code.
 */
export async function appSecretCommand(
  args: string[],
  json: boolean,
  io: CliIo,
  server?: string,
): Promise<number> {
  const [sub, appId, secretId, ...rest] = args
  const known = sub === 'create' || sub === 'list' || sub === 'revoke'
  const arity = sub === 'revoke' ? secretId !== undefined : secretId === undefined
  if (!known || !appId || !arity || rest.length > 0) {
    io.err(SECRET_USAGE)
    return 2
  }
  if (server !== undefined) {
    try {
      return await runSecretCommand(serverStore(server, io), sub, appId, secretId, json, io)
    } catch (e) {
      if (!(e instanceof OperatorCliError)) throw e
      io.err(e.message)
      return 1
    }
  }
  const services = await openServices({ env: io.env, log: io.err })
  try {
    const { deps } = services
    const store: SecretStore = {
      exists: async (id) => Boolean(await findApp(deps, id)),
      create: (id) => createAppSecret(deps, id),
      list: (id) => listAppSecrets(deps, id),
      revoke: (id, secret) => revokeAppSecret(deps, id, secret),
    }
    return await runSecretCommand(store, sub, appId, secretId, json, io)
  } finally {
    await services.close()
  }
}

async function runSecretCommand(
  store: SecretStore,
  sub: 'create' | 'list' | 'revoke',
  appId: string,
  secretId: string | undefined,
  json: boolean,
  io: CliIo,
): Promise<number> {
  if (!(await store.exists(appId))) {
    io.err(`No app with id '${appId}'`)
    return 1
  }
  if (sub === 'create') {
    const created = await store.create(appId)
    io.out(
      json
        ? JSON.stringify(created, null, 2)
        : `Created secret ${created.id} for app ${appId}. It is shown this once; store it in your backend's secrets:\n${created.secret}`,
    )
    return 0
  }
  if (sub === 'list') {
    const secrets = await store.list(appId)
    if (json) io.out(JSON.stringify(secrets, null, 2))
    else if (secrets.length === 0) io.out(`App ${appId} has no secrets`)
    else {
      io.out(`${'ID'.padEnd(16)}  ${'CREATED'.padEnd(24)}  ${'LAST USED'.padEnd(24)}  REVOKED`)
      for (const s of secrets) {
        io.out(
          `${s.id}  ${s.createdAt}  ${(s.lastUsedAt ?? '-').padEnd(24)}  ${s.revokedAt ?? '-'}`,
        )
      }
    }
    return 0
  }
  if (!(await store.revoke(appId, secretId as string))) {
    io.err(`App ${appId} has no secret '${secretId}'`)
    return 1
  }
  io.out(json ? JSON.stringify({ id: secretId, revoked: true }) : `Revoked secret ${secretId}`)
  return 0
}
