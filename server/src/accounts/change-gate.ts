/**
 * The gate on changes of a user's sign-in methods (see requireAccountCredential).
 */
import { LatchError } from '@latch/shared'
import type { MiddlewareHandler } from 'hono'
import type { Deps } from '../context.ts'
import type { HonoEnv } from '../http.ts'
import { presentsCredential } from '../wallets/credential.ts'
import { walletHandedOver } from '../wallets/fork-pair.ts'

/**
 * Refuses a change of the user's sign-in methods (link, unlink, a passkey's rename) made with
 * the access token alone. Linking is the way from a token to the account for good, and to the
 * wallet: an account linked by whoever holds the token (the host page, its scripts, its backend,
 * its logs) signs in as the user and starts a session that recovers the wallet. So the change
 * needs, like the wallet routes, the session's credential, which only the browser that signed
 * in holds (the modal's credentialed fetch carries it; CORS lets no other page send these
 * requests), and a session opened by a fork link needs to be paired first (the fork link
 * passes through the host page; wallets/fork-pair.ts). Runs after requireAuth.
 */
export function requireAccountCredential(deps: Deps): MiddlewareHandler<HonoEnv> {
  return async (c, next) => {
    const ok =
      (await presentsCredential(c, deps)) && (await walletHandedOver(deps, c.get('auth').sid))
    if (!ok) throw LatchError.of('link_sign_in_required')
    await next()
  }
}
