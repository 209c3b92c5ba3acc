/** `latch apps secret create|list|revoke <appId> [<secretId>]`: an app's server secrets. */

import { findApp } from '../apps/service.ts'
import type { CliIo } from '../cli.ts'
import { openServices } from '../index.ts'
import { createAppSecret, listAppSecrets, revokeAppSecret } from './secrets.ts'

export const SECRET_USAGE = `Usage: npm run latch -- apps secret <command> [--json]

  apps secret create <appId>             Create a server secret for the app's backend; it is
                                         printed once, only its hash is kept
  apps secret list <appId>               List the app's secrets (ids, created, last used, revoked)
  apps secret revoke <appId> <secretId>  Revoke a secret at once
`

/** Runs one `apps secret` command (`args` follow `apps secret`); resolves with the exit code. */
export async function appSecretCommand(args: string[], json: boolean, io: CliIo): Promise<number> {
  const [sub, appId, secretId, ...rest] = args
  const known = sub === 'create' || sub === 'list' || sub === 'revoke'
  const arity = sub === 'revoke' ? secretId !== undefined : secretId === undefined
  if (!known || !appId || !arity || rest.length > 0) {
    io.err(SECRET_USAGE)
    return 2
  }
  const services = await openServices({ env: io.env, log: io.err })
  try {
    const { deps } = services
    if (!(await findApp(deps, appId))) {
      io.err(`No app with id '${appId}'`)
      return 1
    }
    if (sub === 'create') {
      const created = await createAppSecret(deps, appId)
      io.out(
        json
          ? JSON.stringify(created, null, 2)
          : `Created secret ${created.id} for app ${appId}. It is shown this once; store it in your backend's secrets:\n${created.secret}`,
      )
      return 0
    }
    if (sub === 'list') {
      const secrets = await listAppSecrets(deps, appId)
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
    if (!(await revokeAppSecret(deps, appId, secretId as string))) {
      io.err(`App ${appId} has no secret '${secretId}'`)
      return 1
    }
    io.out(json ? JSON.stringify({ id: secretId, revoked: true }) : `Revoked secret ${secretId}`)
    return 0
  } finally {
    await services.close()
  }
}
