/** The four code routes (init, authenticate, link, unlink), shared by e-mail and SMS. */

import { type CodeChannel, LatchError, type Result, validateCode } from '@latch/shared'
import type { Locale } from '@latch/shared/i18n'
import { type Context, Hono } from 'hono'
import { z } from 'zod'
import { requireAccountCredential } from '../accounts/change-gate.ts'
import { consumeLinkApproval } from '../accounts/link-approval.ts'
import { linkAccount, type NewAccount, unlinkAccount } from '../accounts/service.ts'
import { type AppRecord, isAllowed, requireMethod } from '../apps/service.ts'
import type { Deps } from '../context.ts'
import type { Db } from '../db/index.ts'
import { clientIp, type HonoEnv, readBody, requireAuth, SUCCESS } from '../http.ts'
import { signIn } from '../sessions/service.ts'
import { answerSignIn } from '../wallets/credential.ts'
import { issueCode, limitIp, verifyCode } from './service.ts'

/** What a code channel brings to the shared routes. */
export interface ChannelRoutes {
  /** The channel, which is also the login method an app switches on for it. */
  channel: CodeChannel
  /** The request bodies, and the field naming the identifier in each of them. */
  bodies: {
    init: z.ZodType
    code: z.ZodType
    unlink: z.ZodType
    /** In init, authenticate and link bodies. */
    field: 'email' | 'phoneNumber'
    /** In unlink bodies. */
    unlinkField: 'address' | 'phoneNumber'
  }
  /** Normalizes an identifier, or says why it is not one. */
  normalize(raw: string): Result<string>
  /** The account an identifier signs in as (its type is the account type unlink names). */
  account(identifier: string): NewAccount
  /** Sends the code, in the visitor's language when init named one. */
  send(deps: Deps, to: string, code: string, appName: string, locale?: Locale): Promise<void>
  /** Refuses, before any code is made, an identifier the channel will not send to. */
  admit?(app: AppRecord, identifier: string): Promise<void>
  /** Counts a send against the channel's budgets, inside the code's transaction. */
  charge?(trx: Db, app: AppRecord): Promise<void>
}

const fields = z.record(z.string(), z.string())

export function codeRoutes(deps: Deps, ch: ChannelRoutes): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()
  // Link and unlink need the signed-in browser's session credential (accounts/change-gate.ts).
  const changeGate = requireAccountCredential(deps)

  /** The normalized identifier of a body, once the app takes the method. */
  function identifierOf(c: Context<HonoEnv>, body: Record<string, string>): string {
    requireMethod(c.get('app'), ch.channel)
    const result = ch.normalize(body[ch.bodies.field] ?? '')
    if (!result.ok) throw LatchError.of('invalid_data', { message: result.error.message })
    return result.value
  }

  /** The normalized identifier of a body, after the method, IP budget and allowlist checks. */
  async function checked(c: Context<HonoEnv>, body: Record<string, string>): Promise<string> {
    const identifier = identifierOf(c, body)
    await limitIp(deps, clientIp(c, deps.config.trustProxy))
    if (!isAllowed(c.get('app'), identifier)) throw LatchError.of('allowlist_rejected')
    return identifier
  }

  /** Verifies the code of a body; a malformed code is as wrong as a wrong one (422). */
  async function verified(c: Context<HonoEnv>): Promise<string> {
    const body = fields.parse(await readBody(c, ch.bodies.code))
    const identifier = identifierOf(c, body)
    const ip = clientIp(c, deps.config.trustProxy)
    const code = validateCode(body.code ?? '')
    if (!code.ok || !isAllowed(c.get('app'), identifier)) {
      // Refused before any try is counted, after the IP's budget as every other refusal.
      await checked(c, body)
      throw LatchError.of('invalid_verification_code')
    }
    // The IP's budget is counted in verifyCode's first statement, with the day's wrong codes.
    await verifyCode(deps, c.get('app').id, ch.channel, identifier, code.value, ip)
    return identifier
  }

  routes.post('/init', async (c) => {
    const body = fields.parse(await readBody(c, ch.bodies.init))
    const app = c.get('app')
    const identifier = await checked(c, body)
    await ch.admit?.(app, identifier)
    const charge = ch.charge
    const code = await issueCode(
      deps,
      app.id,
      ch.channel,
      identifier,
      charge && ((trx) => charge(trx, app)),
    )
    await ch.send(deps, identifier, code, app.name, body.locale as Locale | undefined)
    // The same answer whether or not an account exists for the identifier.
    return c.json(SUCCESS)
  })

  routes.post('/authenticate', async (c) => {
    const identifier = await verified(c)
    const appId = c.get('app').id
    return answerSignIn(c, deps, appId, await signIn(deps, appId, ch.account(identifier)))
  })

  routes.post('/link', requireAuth(deps), changeGate, async (c) => {
    const identifier = await verified(c)
    const { sub, sid } = c.get('auth')
    const kind = ch.account(identifier).type === 'email' ? 'email' : 'phone'
    await consumeLinkApproval(deps, c.get('app').id, sub, sid, kind, identifier)
    const user = await linkAccount(
      deps,
      c.get('app').id,
      c.get('auth').sub,
      ch.account(identifier),
      deps.clock.now(),
    )
    return c.json(user)
  })

  routes.post('/unlink', requireAuth(deps), changeGate, async (c) => {
    const body = fields.parse(await readBody(c, ch.bodies.unlink))
    const raw = body[ch.bodies.unlinkField] ?? ''
    // A differently written number or address still names the stored account.
    const normalized = ch.normalize(raw)
    const identifier = normalized.ok ? normalized.value : raw
    const user = await unlinkAccount(deps, c.get('app').id, c.get('auth').sub, {
      type: ch.account(identifier).type,
      identifier,
    })
    return c.json(user)
  })

  return routes
}
