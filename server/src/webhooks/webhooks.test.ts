import { createHmac, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { isLatchError } from '@latch/shared'
import { afterEach, expect, test } from 'vitest'
// @latch/node is not linked into node_modules in this checkout: its source, as its package exports it.
import { verifyWebhook } from '../../../server-sdk/src/index.ts'
import { linkAccount, unlinkAccount } from '../accounts/service.ts'
import { frameDevice } from '../testing/frame-fetch.ts'
import { describeBackends, type TestServer } from '../testing/test-server.ts'
import { type Receiver, startReceiver } from '../testing/webhook-receiver.ts'
import { addEndpoint, checkEndpointUrl, parseEventFilter } from './endpoints.ts'
import { enqueueEvent, forgetUserEvents } from './events.ts'
import { createWebhookWorker, LEASE_MS, replay, retryDelayMs } from './worker.ts'

/**
 * The Standard Webhooks check, written here from the specification and nothing of Latch's:
 * HMAC-SHA256 under the base64 key after `whsec_`, over `{id}.{timestamp}.{body}`, compared in
 * constant time with each space-separated `v1,<base64>`; the timestamp within 5 minutes.
 */
function specVerify(secret: string, headers: IncomingHttpHeaders, body: string, nowS: number) {
  const id = headers['webhook-id']
  const timestamp = headers['webhook-timestamp']
  const signature = headers['webhook-signature']
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signature !== 'string') {
    return false
  }
  if (Math.abs(nowS - Number(timestamp)) > 5 * 60) return false
  const key = Buffer.from(secret.split('_')[1] ?? '', 'base64')
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest()
  return signature.split(' ').some((part) => {
    const [version, b64] = part.split(',')
    const given = Buffer.from(b64 ?? '', 'base64')
    return version === 'v1' && given.length === mac.length && timingSafeEqual(given, mac)
  })
}

let n = 0
const email = () => `hooks.${++n}.${Date.now()}@example.com`

const receivers: Receiver[] = []
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()))
})

async function receiver(): Promise<Receiver> {
  const r = await startReceiver()
  receivers.push(r)
  return r
}

async function refusal(p: Promise<unknown>) {
  try {
    await p
  } catch (e) {
    if (isLatchError(e)) return e
    throw e
  }
  throw new Error('expected a refusal')
}

describeBackends('webhooks', (get) => {
  // Each test's endpoints go with it (and their deliveries): a worker leases every app's.
  afterEach(async () => {
    await get().deps.db.deleteFrom('webhook_endpoints').execute()
  })

  /** An app with one endpoint at a fresh receiver; the endpoint goes at the test's end. */
  async function setup(events?: string) {
    const s = get()
    const app = await s.newApp({ loginMethods: ['email', 'sms', 'wallet'] })
    const hook = await receiver()
    const endpoint = await addEndpoint(s.deps, app.id, { url: hook.url, events })
    const worker = createWebhookWorker(s.deps)
    /** Runs delivery passes until nothing is due now. */
    const drain = async () => {
      for (let i = 0; i < 50 && (await worker.runOnce()) > 0; i++) {}
    }
    return { s, app, hook, endpoint, worker, drain }
  }

  const rows = (s: TestServer, appId: string) =>
    s.deps.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('app_id', '=', appId)
      .orderBy('created_at')
      .execute()

  test('behavior: sign-ins, links, unlinks and a wallet’s life reach the endpoint signed, verified by the spec’s algorithm and by @latch/node', async () => {
    const { s, app, hook, endpoint, drain } = await setup()
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(endpoint.secret.slice(6), 'base64')).toHaveLength(32)
    // Stored sealed, never as written.
    const stored = await s.deps.db
      .selectFrom('webhook_endpoints')
      .select('secret_sealed')
      .where('id', '=', endpoint.id)
      .executeTakeFirstOrThrow()
    expect(stored.secret_sealed).not.toContain(endpoint.secret.slice(6, 20))

    const address0 = email()
    const auth = await s.emailLogin(app.id, address0)
    const again = await s.emailLogin(app.id, address0)
    await linkAccount(s.deps, app.id, auth.user.id, { type: 'phone', number: '+14155550123' })
    await unlinkAccount(s.deps, app.id, auth.user.id, {
      type: 'phone',
      identifier: '+14155550123',
    })
    const phone = frameDevice(s, app.id)
    const { address } = await phone.create({ accessToken: auth.token })
    await frameDevice(s, app.id).recover({ address, accessToken: auth.token })
    // A passcode wallet of another user, a wrong passcode on a new device.
    const other = await s.emailLogin(app.id, email())
    const pinned = await frameDevice(s, app.id).create({
      accessToken: other.token,
      recoveryPin: 'Abc1x3',
    })
    const wrong = await refusal(
      frameDevice(s, app.id).recover({
        address: pinned.address,
        accessToken: other.token,
        recoveryPin: 'Abc1x4',
      }),
    )
    expect(wrong.code).toBe('invalid_recovery_pin')

    await drain()
    const got = await hook.waitFor(11)
    const nowS = Math.floor(s.clock.now().getTime() / 1000)
    const events = got.map((r) => {
      expect(specVerify(endpoint.secret, r.headers, r.body, nowS)).toBe(true)
      const verified = verifyWebhook(r.headers, r.body, endpoint.secret, { now: s.clock.now() })
      expect(verified.id).toBe(r.headers['webhook-id'])
      expect(r.headers['content-type']).toBe('application/json')
      // Never a token, a share or a secret.
      for (const secret of [auth.token, auth.refresh_token, again.token, again.refresh_token]) {
        expect(r.body).not.toContain(secret)
      }
      expect(r.body).not.toMatch(/authShare|auth_share|recovery_sealed|ciphertext|whsec_/)
      return verified
    })
    expect(events.map((e) => e.type).sort()).toEqual(
      [
        'user.created',
        'user.authenticated',
        'user.authenticated',
        'user.linked_account',
        'user.unlinked_account',
        'wallet.created',
        'wallet.recovered',
        'user.created',
        'user.authenticated',
        'wallet.created',
        'wallet.recovery_failed',
      ].sort(),
    )
    const created = events.find((e) => e.type === 'user.created')
    expect(created?.data).toMatchObject({ user: { id: auth.user.id } })
    expect(Object.keys(created ?? {}).sort()).toEqual(['data', 'id', 'timestamp', 'type'])
    const signIns = events.filter((e) => e.type === 'user.authenticated')
    expect(signIns.map((e) => e.data.isNewUser)).toEqual([true, false, true])
    expect(events.find((e) => e.type === 'user.linked_account')?.data).toMatchObject({
      account: { type: 'phone', number: '+14155550123' },
    })
    expect(events.find((e) => e.type === 'wallet.recovered')?.data).toEqual({
      userId: auth.user.id,
      address: address.toLowerCase(),
      recoveryMethod: 'latch',
    })
    expect(events.find((e) => e.type === 'wallet.recovery_failed')?.data).toMatchObject({
      userId: other.user.id,
      recoveryMethod: 'user-passcode',
    })
    // Each event once, each with its own id; every delivery marked delivered, each attempt logged.
    expect(new Set(events.map((e) => e.id)).size).toBe(11)
    const delivered = await rows(s, app.id)
    expect(delivered.map((d) => d.status)).toEqual(Array(11).fill('delivered'))
    const attempts = await s.deps.db
      .selectFrom('webhook_attempts')
      .select(['status_code', 'error'])
      .where(
        'delivery_id',
        'in',
        delivered.map((d) => d.id),
      )
      .execute()
    expect(attempts).toHaveLength(11)
    expect(attempts.every((a) => a.status_code === 204 && a.error === null)).toBe(true)
  }, 60_000)

  test('behavior: the event filter; an app without endpoints writes no outbox row', async () => {
    const { s, app, hook, drain } = await setup('user.created')
    await s.emailLogin(app.id, email())
    await drain()
    await hook.waitFor(1)
    expect(JSON.parse(hook.received[0]?.body ?? '{}').type).toBe('user.created')
    expect(await rows(s, app.id)).toHaveLength(1)

    const quiet = await s.newApp()
    await s.emailLogin(quiet.id, email())
    expect(await rows(s, quiet.id)).toEqual([])
    expect(() => parseEventFilter('user.created,user.exploded')).toThrow(/user\.exploded/)
    expect(parseEventFilter('')).toEqual(['*'])
  })

  test('behavior: no event for a change that rolls back', async () => {
    const { s, app } = await setup()
    const first = await s.emailLogin(app.id, email())
    const second = await s.emailLogin(app.id, email())
    const before = (await rows(s, app.id)).length
    // The second user cannot take the first one's address: the link's transaction rolls back.
    const taken = first.user.linkedAccounts[0] as { address: string }
    const err = await refusal(
      linkAccount(s.deps, app.id, second.user.id, { type: 'email', address: taken.address }),
    )
    expect(err.code).toBe('linked_to_another_user')
    // An event written inside a transaction that then fails is gone with it.
    await expect(
      s.deps.db.transaction().execute(async (trx) => {
        await enqueueEvent(trx, {
          appId: app.id,
          type: 'user.deleted',
          data: { id: second.user.id },
          now: s.clock.now(),
        })
        throw new Error('the change failed')
      }),
    ).rejects.toThrow('the change failed')
    expect(await rows(s, app.id)).toHaveLength(before)
  })

  test('behavior: a receiver that fails, then recovers, gets every event; backoff doubles with jitter; de-duplicated by id, exactly once', async () => {
    const { s, app, hook, drain } = await setup()
    let failing = true
    hook.answer = (_req, res) => {
      if (failing) res.writeHead(503, { 'retry-after': '1' }).end('down')
      else res.writeHead(200).end('ok')
    }
    for (let i = 0; i < 3; i++) await s.emailLogin(app.id, email())
    await drain()
    await hook.waitFor(6)
    // Three failed rounds, each later than the last.
    const gaps: number[] = []
    for (let round = 0; round < 3; round++) {
      const pending = await rows(s, app.id)
      expect(pending.every((d) => d.status === 'pending')).toBe(true)
      const wait =
        Math.max(...pending.map((d) => d.next_attempt_at.getTime())) - s.clock.now().getTime()
      gaps.push(wait)
      s.clock.advance(wait + 1)
      await drain()
    }
    expect(gaps[1]).toBeGreaterThan(gaps[0] ?? 0)
    expect(gaps[2]).toBeGreaterThan(gaps[1] ?? 0)
    failing = false
    const pending = await rows(s, app.id)
    s.clock.advance(
      Math.max(...pending.map((d) => d.next_attempt_at.getTime())) - s.clock.now().getTime() + 1,
    )
    await drain()
    // Processed once per id, as the spec tells receivers: every event arrived.
    const processed = new Map<string, string>()
    for (const r of hook.received) processed.set(String(r.headers['webhook-id']), r.body)
    expect(processed.size).toBe(6)
    expect([...processed.values()].map((b) => JSON.parse(b).type).sort()).toEqual([
      'user.authenticated',
      'user.authenticated',
      'user.authenticated',
      'user.created',
      'user.created',
      'user.created',
    ])
    expect(hook.received).toHaveLength(6 * 5)
    const done = await rows(s, app.id)
    expect(done.every((d) => d.status === 'delivered' && d.attempts === 5)).toBe(true)
    // The jitter: ±20 % around 5 s, 10 s, 20 s...
    expect(retryDelayMs(1, () => 0)).toBe(4000)
    expect(retryDelayMs(1, () => 0.999)).toBeLessThanOrEqual(6000)
    expect(retryDelayMs(3, () => 0.5)).toBe(20_000)
    expect(retryDelayMs(30, () => 0.5)).toBe(2 * 60 * 60_000)
  }, 60_000)

  test('behavior: retried for 24 hours, then failed; replay sends it again with the same id', async () => {
    const { s, app, hook, drain } = await setup('user.created')
    hook.answer = (_req, res) => res.writeHead(500).end()
    await s.emailLogin(app.id, email())
    await drain()
    for (let i = 0; i < 40; i++) {
      const [row] = await rows(s, app.id)
      if (row?.status !== 'pending') break
      s.clock.advance(Math.max(0, row.next_attempt_at.getTime() - s.clock.now().getTime()) + 1)
      await drain()
    }
    const [failed] = await rows(s, app.id)
    expect(failed?.status).toBe('failed')
    expect(failed?.last_status).toBe(500)
    expect(failed?.finished_at?.getTime()).toBeGreaterThanOrEqual(
      (failed?.created_at.getTime() ?? 0) + 24 * 60 * 60_000,
    )
    expect(failed?.attempts).toBeGreaterThan(10)
    expect(failed?.attempts).toBeLessThan(30)
    const id = String(hook.received[0]?.headers['webhook-id'])

    hook.answer = (_req, res) => res.writeHead(200).end()
    const before = hook.received.length
    expect(await replay(s.deps, failed?.id ?? '')).toEqual({ queued: 1, disabled: [] })
    await drain()
    expect(hook.received).toHaveLength(before + 1)
    expect(hook.received.at(-1)?.headers['webhook-id']).toBe(id)
    expect((await rows(s, app.id))[0]?.status).toBe('delivered')
    // By event id too.
    expect(await replay(s.deps, id)).toEqual({ queued: 1, disabled: [] })
    await drain()
    expect(hook.received).toHaveLength(before + 2)
    expect(await replay(s.deps, 'dlv_nothing')).toEqual({ queued: 0, disabled: [] })
  }, 60_000)

  test('behavior: a deleted user’s events can be forgotten before user.deleted is written (the user API’s deletion)', async () => {
    const { s, app, hook, drain } = await setup()
    const gone = await s.emailLogin(app.id, email())
    const kept = await s.emailLogin(app.id, email())
    await drain()
    await hook.waitFor(4)
    await s.deps.db.transaction().execute(async (trx) => {
      expect(await forgetUserEvents(trx, app.id, gone.user.id)).toBe(2)
      await enqueueEvent(trx, {
        appId: app.id,
        type: 'user.deleted',
        data: { id: gone.user.id },
        now: s.clock.now(),
      })
    })
    const left = await rows(s, app.id)
    expect(left.map((d) => d.event_type).sort()).toEqual([
      'user.authenticated',
      'user.created',
      'user.deleted',
    ])
    expect(left.filter((d) => d.payload.includes(gone.user.id)).map((d) => d.event_type)).toEqual([
      'user.deleted',
    ])
    expect(left.filter((d) => d.payload.includes(kept.user.id))).toHaveLength(2)
    await drain()
    await hook.waitFor(5)
    expect(JSON.parse(hook.received[4]?.body ?? '{}')).toMatchObject({
      type: 'user.deleted',
      data: { id: gone.user.id },
    })
  })

  test('behavior: a secret that no longer opens (another server secret) is a failed attempt, logged, not a delivery leased forever', async () => {
    const { s, app, hook, endpoint, drain } = await setup('user.created')
    await s.deps.db
      .updateTable('webhook_endpoints')
      .set({ secret_sealed: 'v2.garbage.garbage.garbage' })
      .where('id', '=', endpoint.id)
      .execute()
    await s.emailLogin(app.id, email())
    await drain()
    expect(hook.received).toEqual([])
    const [row] = await rows(s, app.id)
    expect(row).toMatchObject({
      status: 'pending',
      lease_owner: null,
      last_error: "the endpoint's signing secret does not open with this server secret",
    })
  })

  test('behavior: a delivery deleted while it is being sent (endpoint removed, user deleted) records nothing and logs no failure', async () => {
    const { s, app, hook, worker } = await setup('user.created')
    const answers: (() => void)[] = []
    hook.answer = (_req, res) => answers.push(() => res.writeHead(200).end())
    await s.emailLogin(app.id, email())
    const sending = worker.runOnce()
    await hook.waitFor(1)
    await s.deps.db.deleteFrom('webhook_deliveries').where('app_id', '=', app.id).execute()
    for (const answer of answers) answer()
    expect(await sending).toBe(1)
    expect(s.logs.filter((l) => l.includes('webhook delivery'))).toEqual([])
  })

  test('behavior: 410 Gone disables the endpoint and fails its queue', async () => {
    const { s, app, hook, endpoint, drain } = await setup()
    hook.answer = (_req, res) => res.writeHead(410).end()
    await s.emailLogin(app.id, email())
    await drain()
    const all = await rows(s, app.id)
    expect(all.map((d) => d.status)).toEqual(['failed', 'failed'])
    const row = await s.deps.db
      .selectFrom('webhook_endpoints')
      .select(['disabled_at', 'disabled_reason'])
      .where('id', '=', endpoint.id)
      .executeTakeFirstOrThrow()
    expect(row.disabled_reason).toBe('answered 410 Gone')
    // Nothing more is written for it.
    await s.emailLogin(app.id, email())
    expect(await rows(s, app.id)).toHaveLength(2)
  })

  test('security: in production mode an endpoint whose name resolves to 127.0.0.1 is refused at send time, and the refusal logged', async () => {
    const { s, app, hook } = await setup()
    const production = { ...s.deps, config: { ...s.deps.config, production: true } }
    const port = new URL(hook.url).port
    // A name passes when it is added (it is checked once resolved, at every send).
    const named = await addEndpoint(production, app.id, {
      url: `https://hooks.example.test:${port}/hook`,
      events: 'user.created',
    })
    const worker = createWebhookWorker(production, {
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    })
    await s.emailLogin(app.id, email())
    await worker.runOnce()
    const refused = (await rows(s, app.id)).filter((d) => d.endpoint_id === named.id)
    expect(refused).toHaveLength(1)
    expect(refused[0]).toMatchObject({
      status: 'pending',
      last_status: null,
      last_error: 'hooks.example.test resolves to 127.0.0.1, which is not a public address',
    })
    // Only the plain-http loopback endpoint of setup() was reached, and only outside production.
    expect(hook.received.every((r) => r.headers.host === `127.0.0.1:${port}`)).toBe(true)
  })

  test('refusal: endpoint URLs: https only (plain http to loopback outside production), no credentials; production refuses private literals', () => {
    expect(checkEndpointUrl('https://hooks.example.com/latch', false)).toBe(
      'https://hooks.example.com/latch',
    )
    expect(checkEndpointUrl('http://127.0.0.1:9000/h', false)).toBe('http://127.0.0.1:9000/h')
    expect(checkEndpointUrl('http://localhost:9000/h', false)).toBe('http://localhost:9000/h')
    expect(() => checkEndpointUrl('http://hooks.example.com/h', false)).toThrow(/https/)
    expect(() => checkEndpointUrl('http://127.0.0.1:9000/h', true)).toThrow(/https/)
    expect(() => checkEndpointUrl('ftp://hooks.example.com/', false)).toThrow(/https/)
    expect(() => checkEndpointUrl('https://u:p@hooks.example.com/', false)).toThrow(/password/)
    expect(() => checkEndpointUrl('not a url', false)).toThrow(/not a URL/)
    for (const host of [
      '127.0.0.1',
      '10.1.2.3',
      '169.254.169.254',
      '[::1]',
      '[fd00::1]',
      'localhost',
    ]) {
      expect(() => checkEndpointUrl(`https://${host}/h`, true)).toThrow(/not a public address/)
    }
    expect(checkEndpointUrl('https://93.184.215.14/h', true)).toBe('https://93.184.215.14/h')
    // Other spellings of loopback normalize to it first.
    for (const host of [
      '2130706433',
      '0x7f000001',
      '127.1',
      '[::ffff:127.0.0.1]',
      '[0:0:0:0:0:0:0:1]',
    ]) {
      expect(() => checkEndpointUrl(`https://${host}/h`, true)).toThrow(/not a public address/)
    }
  })

  test('refusal: a lease keeps a delivery from a second process until it expires', async () => {
    const { s, app, hook } = await setup('user.created')
    hook.answer = () => {} // never answers: the first process holds the lease
    await s.emailLogin(app.id, email())
    const first = createWebhookWorker(s.deps)
    const second = createWebhookWorker(s.deps)
    const sending = first.runOnce()
    await hook.waitFor(1)
    expect(await second.runOnce()).toBe(0)
    await first.stop()
    await sending
    s.clock.advance(LEASE_MS + 1)
    hook.answer = (_req, res) => res.writeHead(200).end()
    expect(await second.runOnce()).toBe(1)
    expect(hook.received).toHaveLength(2)
    expect(hook.received[1]?.headers['webhook-id']).toBe(hook.received[0]?.headers['webhook-id'])
    expect((await rows(s, app.id))[0]?.status).toBe('delivered')
  }, 30_000)
})
