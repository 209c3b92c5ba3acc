/** Passkeys: POST /passkeys/{register,authenticate}/options, /register, /authenticate, /link, /rename, /unlink. */

import {
  LatchError,
  passkeyFinishBody,
  passkeyOptionsBody,
  passkeyRenameBody,
  passkeyUnlinkBody,
} from '@latch/shared'
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import { Hono } from 'hono'
import { requireAccountCredential } from '../accounts/change-gate.ts'
import { consumeLinkApproval } from '../accounts/link-approval.ts'
import { unlinkAccount } from '../accounts/service.ts'
import { requireMethod } from '../apps/service.ts'
import type { Deps } from '../context.ts'
import { clientIp, type HonoEnv, optionalAuth, readBody, requireAuth } from '../http.ts'
import { hit, type Limit } from '../ratelimit.ts'
import { logoutSession, signIn } from '../sessions/service.ts'
import { answerSignIn } from '../wallets/credential.ts'
import {
  authenticationOptions,
  linkPasskey,
  passkeyAccountId,
  registrationOptions,
  renamePasskey,
  verifyAuthentication,
  verifyRegistration,
} from './service.ts'

/** Ceremonies one client address may start: a sign-in starts one, conditional UI one more. */
export const PASSKEY_OPTIONS_IP_LIMIT: Limit = { max: 60, windowMs: 5 * 60_000 }
/** Ceremonies an app's visitors may start together. */
export const PASSKEY_OPTIONS_APP_LIMIT: Limit = { max: 3000, windowMs: 5 * 60_000 }
/** Responses one client address may present (each costs a signature check). */
export const PASSKEY_VERIFY_IP_LIMIT: Limit = { max: 30, windowMs: 5 * 60_000 }

export function passkeyRoutes(deps: Deps): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()
  // Link and unlink need the signed-in browser's session credential (accounts/change-gate.ts).
  const changeGate = requireAccountCredential(deps)
  const ipOf = (c: Parameters<typeof clientIp>[0]) => clientIp(c, deps.config.trustProxy)

  async function limitOptions(c: Parameters<typeof clientIp>[0], appId: string) {
    await hit(deps.db, deps.clock, `passkey:options:ip:${ipOf(c)}`, PASSKEY_OPTIONS_IP_LIMIT)
    await hit(deps.db, deps.clock, `passkey:options:app:${appId}`, PASSKEY_OPTIONS_APP_LIMIT)
  }

  routes.post('/register/options', optionalAuth(deps), async (c) => {
    const body = await readBody(c, passkeyOptionsBody)
    const app = c.get('app')
    requireMethod(app, 'passkey')
    await limitOptions(c, app.id)
    const options = await registrationOptions(deps, {
      app,
      // Signed in: the challenge serves only this user's /link. A stale token: a sign-up.
      userId: c.get('maybeAuth')?.sub ?? null,
      browserHash: body.browser_hash,
    })
    return c.json({ options })
  })

  routes.post('/authenticate/options', async (c) => {
    const body = await readBody(c, passkeyOptionsBody)
    const app = c.get('app')
    requireMethod(app, 'passkey')
    await limitOptions(c, app.id)
    return c.json({
      options: await authenticationOptions(deps, { app, browserHash: body.browser_hash }),
    })
  })

  /** Sign-up: a new user whose one account is the new passkey, signed in. */
  routes.post('/register', async (c) => {
    const body = await readBody(c, passkeyFinishBody)
    const app = c.get('app')
    requireMethod(app, 'passkey')
    await hit(deps.db, deps.clock, `passkey:verify:ip:${ipOf(c)}`, PASSKEY_VERIFY_IP_LIMIT)
    const registered = await verifyRegistration(deps, {
      app,
      userId: null,
      credential: body.credential as unknown as RegistrationResponseJSON,
      browserSecret: body.browser_secret,
      name: body.name,
    })
    const signedIn = await signIn(deps, app.id, registered.account)
    const linked = await passkeyAccountId(deps, app.id, registered.account.credentialId)
    if (!signedIn.response.is_new_user || !linked || linked.user_id !== signedIn.session.userId) {
      // Only a race with a registration of the same credential id gets here: that session
      // is not this visitor's to keep.
      await logoutSession(deps, app.id, null, signedIn.session.sessionId)
      throw LatchError.of('linked_to_another_user')
    }
    await registered.store(linked.id, linked.user_id)
    return answerSignIn(c, deps, app.id, signedIn)
  })

  routes.post('/authenticate', async (c) => {
    const body = await readBody(c, passkeyFinishBody)
    const app = c.get('app')
    requireMethod(app, 'passkey')
    await hit(deps.db, deps.clock, `passkey:verify:ip:${ipOf(c)}`, PASSKEY_VERIFY_IP_LIMIT)
    const account = await verifyAuthentication(deps, {
      app,
      credential: body.credential as unknown as AuthenticationResponseJSON,
      browserSecret: body.browser_secret,
    })
    return answerSignIn(c, deps, app.id, await signIn(deps, app.id, account))
  })

  routes.post('/link', requireAuth(deps), changeGate, async (c) => {
    const body = await readBody(c, passkeyFinishBody)
    const app = c.get('app')
    requireMethod(app, 'passkey')
    await hit(deps.db, deps.clock, `passkey:verify:ip:${ipOf(c)}`, PASSKEY_VERIFY_IP_LIMIT)
    const userId = c.get('auth').sub
    const registered = await verifyRegistration(deps, {
      app,
      userId,
      credential: body.credential as unknown as RegistrationResponseJSON,
      browserSecret: body.browser_secret,
      name: body.name,
    })
    await consumeLinkApproval(deps, app.id, userId, c.get('auth').sid, 'passkey', 'passkey')
    return c.json(await linkPasskey(deps, app.id, userId, registered))
  })

  routes.post('/rename', requireAuth(deps), changeGate, async (c) => {
    const body = await readBody(c, passkeyRenameBody)
    const user = await renamePasskey(
      deps,
      c.get('app').id,
      c.get('auth').sub,
      body.credential_id,
      body.name,
    )
    return c.json(user)
  })

  /** Removes a passkey (its credential row goes with the account); never the last sign-in method. */
  routes.post('/unlink', requireAuth(deps), changeGate, async (c) => {
    const body = await readBody(c, passkeyUnlinkBody)
    const user = await unlinkAccount(deps, c.get('app').id, c.get('auth').sub, {
      type: 'passkey',
      identifier: body.credential_id,
    })
    return c.json(user)
  })

  return routes
}
