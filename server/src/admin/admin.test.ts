/**
 * App secrets and the user API on PGlite and PostgreSQL: each call, each refusal, the audit,
 * and a deletion that leaves no row of the user in any table the database has (the tables
 * are read from information_schema, so a table added later is checked too).
 */
import type { User } from '@latch/shared'
import { sql } from 'kysely'
import { expect, test } from 'vitest'
import { linkAccount } from '../accounts/service.ts'
import { sweep } from '../sweep.ts'
import { latchCli } from '../testing/cli.ts'
import { frameDevice } from '../testing/frame-fetch.ts'
import {
  type Answer,
  describeBackends,
  freshIp,
  type RequestOptions,
  TEST_SECRET,
  type TestServer,
} from '../testing/test-server.ts'
import { addEndpoint } from '../webhooks/endpoints.ts'
import { ADMIN_APP_LIMIT, REFUSAL_AUDIT_APP_LIMIT, REFUSAL_AUDIT_IP_LIMIT } from './routes.ts'
import { createAppSecret, listAppSecrets, revokeAppSecret } from './secrets.ts'

let n = 0
const email = () => `admin.${++n}.${Date.now()}@example.com`

type ErrorBody = { error: { code: string; type: string; message: string } }

describeBackends('user API', (get) => {
  async function setup() {
    const s = get()
    const app = await s.newApp({ loginMethods: ['email', 'sms', 'wallet', 'google'] })
    const { secret, id: secretId } = await createAppSecret(s.deps, app.id)
    /** A call of the user API as a backend makes it: no browser headers, the secret as bearer. */
    const admin = <T = Record<string, unknown>>(
      path: string,
      opts: RequestOptions & { secret?: string | null; appId?: string } = {},
    ): Promise<Answer<T>> => {
      const bearer = opts.secret === undefined ? secret : opts.secret
      return s.request<T>(`/admin/apps/${opts.appId ?? app.id}${path}`, {
        ...opts,
        appId: null,
        headers: { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...opts.headers },
      })
    }
    return { s, app, appId: app.id, secret, secretId, admin }
  }

  test('security: no secret, a malformed one, another app’s, a revoked one: 401 invalid_app_secret; a browser request: 403 before the secret is read', async () => {
    const { s, appId, secret, admin } = await setup()
    const user = await s.emailLogin(appId, email())
    const path = `/users/${encodeURIComponent(user.user.id)}`
    expect((await admin(path)).status).toBe(200)

    const other = await s.newApp()
    const otherSecret = (await createAppSecret(s.deps, other.id)).secret
    const revoked = await createAppSecret(s.deps, appId)
    await revokeAppSecret(s.deps, appId, revoked.id)
    const refused: [string, string | null][] = [
      ['none', null],
      ['malformed', 'lsk_nope'],
      ['right shape, unknown', `lsk_${'a'.repeat(16)}_${'A'.repeat(43)}`],
      ['this secret’s id, other bits', `${secret.slice(0, 21)}${'B'.repeat(43)}`],
      ['another app’s', otherSecret],
      ['revoked', revoked.secret],
      // What the host page, its scripts and its logs hold is never an app secret.
      ['a user’s access token', user.token],
      ['a user’s refresh token', user.refresh_token],
    ]
    for (const [name, bad] of refused) {
      const r = await admin<ErrorBody>(path, { secret: bad })
      expect([name, r.status, r.body.error.code]).toEqual([name, 401, 'invalid_app_secret'])
    }
    // The other app's secret opens its own app only, not this app's users through it.
    const cross = await admin<ErrorBody>(path, { secret: otherSecret, appId: other.id })
    expect(cross.status).toBe(404)
    // No app by that id answers as a bad secret, not as a missing app.
    expect((await admin<ErrorBody>(path, { appId: 'x'.repeat(25) })).body.error.code).toBe(
      'invalid_app_secret',
    )

    const browserHeaders: Record<string, string>[] = [
      { origin: 'http://localhost:5173' },
      { referer: 'http://localhost:5173/page' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-dest': 'empty' },
      { 'sec-fetch-user': '?1' },
    ]
    // Node's fetch (undici) sends Sec-Fetch-Mode: cors and nothing else of these: admitted.
    expect((await admin(path, { headers: { 'sec-fetch-mode': 'cors' } })).status).toBe(200)
    for (const headers of browserHeaders) {
      const r = await admin<ErrorBody>(path, { headers })
      expect([headers, r.status, r.body.error.code]).toEqual([
        headers,
        403,
        'app_secret_from_browser',
      ])
    }
  })

  test('behavior: secrets are shown once, stored as a hash, several live, last use recorded, revoked at once', async () => {
    const { s, appId, secret, secretId, admin } = await setup()
    expect(secret).toMatch(/^lsk_[a-z0-9]{16}_[A-Za-z0-9_-]{43}$/)
    const second = await createAppSecret(s.deps, appId)
    const rows = await s.deps.db
      .selectFrom('app_secrets')
      .selectAll()
      .where('app_id', '=', appId)
      .execute()
    expect(rows).toHaveLength(2)
    for (const row of rows) {
      expect(JSON.stringify(row)).not.toContain(secret.slice(21))
      expect(JSON.stringify(row)).not.toContain(second.secret.slice(21))
      expect(row.hash).toMatch(/^[0-9a-f]{64}$/)
    }
    expect((await listAppSecrets(s.deps, appId)).every((x) => x.lastUsedAt === null)).toBe(true)
    expect((await admin('/users')).status).toBe(200)
    expect((await admin('/users', { secret: second.secret })).status).toBe(200)
    const listed = await listAppSecrets(s.deps, appId)
    expect(listed.map((x) => x.lastUsedAt !== null)).toEqual([true, true])
    expect(JSON.stringify(listed)).not.toContain('lsk_')

    expect(await revokeAppSecret(s.deps, appId, secretId)).toBe(true)
    expect((await admin('/users')).status).toBe(401)
    expect((await admin('/users', { secret: second.secret })).status).toBe(200)
    expect(await revokeAppSecret(s.deps, 'x'.repeat(25), second.id)).toBe(false)
  })

  test('behavior: a user by id, e-mail, phone, wallet address and social subject, in the SDK’s User shape', async () => {
    const { s, appId, admin } = await setup()
    const address = email()
    const auth = await s.emailLogin(appId, address)
    const id = auth.user.id
    const { address: wallet } = await frameDevice(s, appId).create({ accessToken: auth.token })
    await linkAccount(s.deps, appId, id, {
      type: 'phone',
      number: '+14155550123',
    })
    const linked = await linkAccount(s.deps, appId, id, {
      type: 'google_oauth',
      subject: `g-${n}`,
      email: address,
      name: 'Ada',
    })
    const byId = await admin<User>(`/users/${encodeURIComponent(id)}`)
    expect(byId.status).toBe(200)
    expect(byId.body).toEqual(linked)
    expect(byId.body.wallet?.address.toLowerCase()).toBe(wallet.toLowerCase())
    const lookups = [
      `/users/by-email?email=${encodeURIComponent(address.toUpperCase())}`,
      '/users/by-phone?phone=%2B14155550123',
      '/users/by-phone?phone=(415)%20555-0123',
      `/users/by-wallet?address=${wallet.toUpperCase().replace('0X', '0x')}`,
      `/users/by-social?provider=google&subject=g-${n}`,
    ]
    for (const path of lookups) {
      const r = await admin<User>(path)
      expect([path, r.status, r.body.id]).toEqual([path, 200, id])
    }
    expect((await admin('/users/%00', { method: 'DELETE' })).status).toBe(400)
    // Not a Latch user id at all: the catalogue's account id error, apart from 404 for no user.
    for (const [path, method] of [
      ['/users/ada%40example.com', 'GET'],
      ['/users/42', 'GET'],
      ['/users/did%3Aprivy%3Aabc', 'GET'],
      [`/users/${encodeURIComponent(id.toUpperCase())}`, 'GET'],
      ['/users/ada%40example.com', 'DELETE'],
    ] as const) {
      const r = await admin<ErrorBody>(path, { method })
      expect([path, method, r.status, r.body.error]).toEqual([
        path,
        method,
        400,
        expect.objectContaining({
          code: 'missing_or_invalid_latch_account_id',
          message: 'Missing or invalid Latch account ID',
        }),
      ])
    }
    for (const path of [
      '/users/by-email?email=nobody%40example.com',
      '/users/by-social?provider=github&subject=g-1',
      '/users/did%3Alatch%3Anobody',
    ]) {
      const r = await admin<ErrorBody>(path)
      expect([path, r.status, r.body.error.code]).toEqual([path, 404, 'not_found'])
    }
    for (const path of [
      '/users/by-wallet?address=0x12',
      '/users/by-phone?phone=12',
      '/users/by-social?provider=myspace&subject=1',
      '/users/by-email',
      '/users/by-email?email=a%40b.c&extra=1',
      // Text PostgreSQL cannot store: refused as bad input, never a 500.
      '/users/did%3Alatch%3A%00x',
      '/users/by-email?email=a%00%40b.c',
      '/users/by-social?provider=google&subject=%00',
      '/users/by-phone?phone=%00',
      `/users?cursor=${Buffer.from(JSON.stringify(['2020-01-01T00:00:00.000Z', 'a\u0000'])).toString('base64url')}`,
    ]) {
      const r = await admin<ErrorBody>(path)
      expect([path, r.status]).toEqual([path, 400])
    }
  })

  test('behavior: the list pages in a stable order with an opaque cursor and filters', async () => {
    const { s, appId, admin } = await setup()
    const ids: string[] = []
    const created: string[] = []
    for (let i = 0; i < 5; i++) {
      const { user } = await s.emailLogin(appId, email())
      ids.push(user.id)
      created.push(user.createdAt)
      s.clock.advance(1000)
    }
    const withWallet = await s.emailLogin(appId, email())
    await frameDevice(s, appId).create({ accessToken: withWallet.token })
    ids.push(withWallet.user.id)
    const phoneUser = await linkAccount(s.deps, appId, ids[0] as string, {
      type: 'phone',
      number: '+14155550199',
    })

    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const q: string = cursor ? `&cursor=${cursor}` : ''
      const r: Answer<{ users: User[]; next_cursor: string | null }> = await admin(
        `/users?limit=4${q}`,
      )
      expect(r.status).toBe(200)
      seen.push(...r.body.users.map((u) => u.id))
      cursor = r.body.next_cursor
      pages++
    } while (cursor)
    expect(seen).toEqual(ids)
    expect(pages).toBe(2)

    const filtered = async (q: string) =>
      (await admin<{ users: User[] }>(`/users?${q}`)).body.users.map((u) => u.id)
    expect(await filtered('has_wallet=true')).toEqual([withWallet.user.id])
    expect(await filtered('has_wallet=false')).toEqual(ids.slice(0, 5))
    expect(await filtered('login_method=sms')).toEqual([phoneUser.id])
    expect(await filtered('login_method=google')).toEqual([])
    // The in-app wallet is not a login method.
    expect(await filtered('login_method=wallet')).toEqual([])
    // Inclusive: the fifth user's own creation time.
    const since = created[4] as string
    expect(await filtered(`created_since=${encodeURIComponent(since)}`)).toEqual(ids.slice(4))

    for (const q of [
      'limit=0',
      'limit=101',
      'limit=abc',
      'cursor=garbage',
      'login_method=fax',
      'has_wallet=maybe',
      'created_since=yesterday',
      'sort=desc',
    ]) {
      const r = await admin<ErrorBody>(`/users?${q}`)
      expect([q, r.status, r.body.error.code]).toEqual([q, 400, 'invalid_data'])
    }
  })

  test('behavior: import by e-mail or phone is idempotent, at most 100 a batch, and imported users sign in as themselves', async () => {
    const { s, appId, admin } = await setup()
    const a = email()
    const existing = await s.emailLogin(appId, email())
    const existingEmail = existing.user.email?.address as string
    const batch = [{ email: a.toUpperCase() }, { phone: '+14155550142' }, { email: existingEmail }]
    type Results = { results: { id: string; status: string; email?: string; phone?: string }[] }
    const first = await admin<Results>('/users/import', { body: { users: batch } })
    expect(first.status).toBe(200)
    expect(first.body.results.map((r) => [r.email ?? r.phone, r.status])).toEqual([
      [a, 'created'],
      ['+14155550142', 'created'],
      [existingEmail, 'existing'],
    ])
    expect(first.body.results[2]?.id).toBe(existing.user.id)
    const again = await admin<Results>('/users/import', { body: { users: batch } })
    expect(again.body.results.map((r) => r.status)).toEqual(['existing', 'existing', 'existing'])
    expect(again.body.results.map((r) => r.id)).toEqual(first.body.results.map((r) => r.id))
    const count = await s.deps.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('app_id', '=', appId)
      .executeTakeFirstOrThrow()
    expect(Number(count.n)).toBe(3)

    const signIn = await s.emailLogin(appId, a)
    expect(signIn.is_new_user).toBe(false)
    expect(signIn.user.id).toBe(first.body.results[0]?.id)

    const many = Array.from({ length: 101 }, (_, i) => ({ email: `bulk${i}@example.com` }))
    for (const body of [
      { users: many },
      { users: [] },
      { users: [{ email: 'not an address' }] },
      { users: [{ phone: '12' }] },
      { users: [{ email: 'a@b.co', phone: '+14155550142' }] },
      { users: [{ name: 'x' }] },
    ]) {
      const r = await admin<ErrorBody>('/users/import', { body })
      expect([JSON.stringify(body).slice(0, 40), r.status]).toEqual([
        JSON.stringify(body).slice(0, 40),
        400,
      ])
    }
  })

  test('behavior: export streams every user as JSON Lines, with no share, secret, token or hash', async () => {
    const { s, appId, admin } = await setup()
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const auth = await s.emailLogin(appId, email())
      ids.push(auth.user.id)
      if (i === 0) await frameDevice(s, appId).create({ accessToken: auth.token })
    }
    const r = await admin<string>('/users/export')
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toMatch(/^application\/x-ndjson/)
    const text = String(r.body)
    const lines = text.trimEnd().split('\n')
    expect(lines.map((l) => (JSON.parse(l) as User).id)).toEqual(ids)
    expect(text).not.toMatch(/share|sealed|ciphertext|secret|token|hash|"key"/i)
  })

  test('behavior: rate limited per app (another app keeps its budget)', async () => {
    const { s, appId, admin } = await setup()
    const other = await setup()
    const now = s.clock.now()
    await s.deps.db
      .insertInto('rate_limits')
      .values({
        key: `admin:app:${appId}`,
        window_start: now,
        count: ADMIN_APP_LIMIT.max,
        expires_at: new Date(now.getTime() + ADMIN_APP_LIMIT.windowMs),
      })
      .execute()
    const r = await admin<ErrorBody>('/users')
    expect(r.status).toBe(429)
    expect(r.body.error.code).toBe('too_many_requests')
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await other.admin('/users')).status).toBe(200)
  })

  test('behavior: every authenticated call is audited with app, secret, action, a MAC of its target, status, address and time', async () => {
    const { s, appId, secretId, admin } = await setup()
    const address = email()
    const auth = await s.emailLogin(appId, address)
    const ip = freshIp()
    await admin(`/users/by-email?email=${encodeURIComponent(address)}`, { ip })
    await admin('/users/by-email?email=nobody%40example.com', { ip })
    await admin(`/users/${encodeURIComponent(auth.user.id)}`, { ip, method: 'DELETE' })
    const rows = await s.deps.db
      .selectFrom('admin_audit')
      .selectAll()
      .where('app_id', '=', appId)
      .orderBy('id')
      .execute()
    expect(rows.map((r) => [r.secret_id, r.action, r.status, r.ip])).toEqual([
      [secretId, 'GET /users/by-email', 200, ip],
      [secretId, 'GET /users/by-email', 404, ip],
      [secretId, 'DELETE /users/:userId', 200, ip],
    ])
    expect(rows[0]?.target).toMatch(/^email:[A-Za-z0-9_-]{43}$/)
    expect(rows[2]?.target).toMatch(/^user:/)
    expect(JSON.stringify(rows)).not.toContain(address)
    expect(JSON.stringify(rows)).not.toContain(auth.user.id)
    for (const row of rows) expect(row.created_at).toBeInstanceOf(Date)
  })

  test('security: refused calls naming an existing app are audited too: the secret id claimed, the route, the refusal, the status, the address', async () => {
    const { s, appId, secret, admin } = await setup()
    const user = await s.emailLogin(appId, email())
    const revoked = await createAppSecret(s.deps, appId)
    await revokeAppSecret(s.deps, appId, revoked.id)
    const ip = freshIp()
    const path = `/users/${encodeURIComponent(user.user.id)}`
    await admin(path, { ip, secret: revoked.secret })
    await admin('/users', { ip, secret: 'lsk_bad' })
    await admin('/users', { ip, secret: null })
    // A page's request: refused before the secret is read, so no secret id is recorded.
    await admin('/users/export', { ip, headers: { origin: 'https://evil.example' } })
    // No app by that id: nothing to attribute the refusal to, nothing written.
    await admin('/users', { ip, appId: 'x'.repeat(25) })
    const rows = await s.deps.db
      .selectFrom('admin_audit')
      .selectAll()
      .where('ip', '=', ip)
      .orderBy('id')
      .execute()
    expect(rows.map((r) => [r.app_id, r.secret_id, r.action, r.target, r.status])).toEqual([
      [appId, revoked.id, 'GET /users/:userId', 'refused:invalid_app_secret', 401],
      [appId, '', 'GET /users', 'refused:invalid_app_secret', 401],
      [appId, '', 'GET /users', 'refused:invalid_app_secret', 401],
      [appId, '', 'GET /users/export', 'refused:app_secret_from_browser', 403],
    ])
    const written = JSON.stringify(rows)
    expect(written).not.toContain(user.user.id)
    expect(written).not.toContain(revoked.secret.slice(21))
    expect(written).not.toContain(secret)
  })

  test('security: a flood of refusals writes at most its budget per address and per app, then nothing more', async () => {
    const { s, appId, admin } = await setup()
    const audited = async (ip?: string) => {
      let q = s.deps.db
        .selectFrom('admin_audit')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('app_id', '=', appId)
      if (ip) q = q.where('ip', '=', ip)
      return Number((await q.executeTakeFirstOrThrow()).n)
    }
    const flooder = freshIp()
    const over = REFUSAL_AUDIT_IP_LIMIT.max + 5
    for (let i = 0; i < over; i++) {
      expect((await admin('/users', { ip: flooder, secret: 'lsk_guess' })).status).toBe(401)
    }
    expect(await audited(flooder)).toBe(REFUSAL_AUDIT_IP_LIMIT.max)
    // Another address still gets its refusals written, until the app's budget is spent.
    const other = freshIp()
    await admin('/users', { ip: other, secret: 'lsk_guess' })
    expect(await audited(other)).toBe(1)
    await s.deps.db
      .updateTable('rate_limits')
      .set({ count: REFUSAL_AUDIT_APP_LIMIT.max })
      .where('key', '=', `admin:refusal-audit:${appId}`)
      .execute()
    const third = freshIp()
    expect((await admin('/users', { ip: third, secret: 'lsk_guess' })).status).toBe(401)
    expect(await audited(third)).toBe(0)
    // The window ends: refusals are written again.
    s.clock.advance(REFUSAL_AUDIT_APP_LIMIT.windowMs + 1_000)
    await admin('/users', { ip: third, secret: 'lsk_guess' })
    expect(await audited(third)).toBe(1)
  })

  test('behavior: the sweep deletes audit rows past their retention (a year unless set) and keeps the rest', async () => {
    const { s, appId, secretId } = await setup()
    const now = s.clock.now().getTime()
    const day = 24 * 60 * 60_000
    const row = (action: string, daysAgo: number) => ({
      app_id: appId,
      secret_id: secretId,
      action,
      target: null,
      status: 200,
      ip: '192.0.2.1',
      created_at: new Date(now - daysAgo * day),
    })
    await s.deps.db
      .insertInto('admin_audit')
      .values([row('GET /users', 366), row('GET /users', 364), row('GET /users', 40)])
      .execute()
    const left = async () =>
      (
        await s.deps.db
          .selectFrom('admin_audit')
          .select('created_at')
          .where('app_id', '=', appId)
          .orderBy('created_at')
          .execute()
      ).map((r) => Math.round((now - r.created_at.getTime()) / day))
    await sweep(s.deps.db, s.clock)
    expect(await left()).toEqual([364, 40])
    await sweep(s.deps.db, s.clock, { auditRetentionDays: 30 })
    expect(await left()).toEqual([])
  })

  /** Rows anywhere in the database whose text holds any of the needles (lowercase). */
  async function rowsNaming(s: TestServer, needles: string[]): Promise<Record<string, number>> {
    const tables = await sql<{ table_name: string }>`
      select table_name from information_schema.tables
      where table_schema = current_schema() and table_type = 'BASE TABLE'
    `.execute(s.deps.db)
    expect(tables.rows.map((t) => t.table_name)).toEqual(
      expect.arrayContaining(['users', 'wallets', 'sessions', 'analytics_events', 'admin_audit']),
    )
    const found: Record<string, number> = {}
    for (const { table_name: table } of tables.rows) {
      // The one row allowed to name the user afterwards: the user.deleted event (its id only).
      const allowed =
        table === 'webhook_deliveries' ? sql`and t.event_type <> 'user.deleted'` : sql``
      for (const needle of needles) {
        const r = await sql<{ n: string }>`
          select count(*) as n from ${sql.table(table)} as t
          where position(${needle} in lower(t::text)) > 0 ${allowed}
        `.execute(s.deps.db)
        const count = Number(r.rows[0]?.n ?? 0)
        if (count > 0) found[`${table} ∋ ${needle}`] = count
      }
    }
    return found
  }

  test('security: deleting a user removes every row of theirs in every table; their refresh token and wallet recovery fail', async () => {
    const { s, appId, admin } = await setup()
    // An endpoint wanting every event: the outbox then holds rows about the user too. Its
    // address answers nothing, so the rows stay pending.
    await addEndpoint(s.deps, appId, { url: 'http://127.0.0.1:9/hook' })
    const address = email()
    const auth = await s.emailLogin(appId, address)
    const userId = auth.user.id
    const device = frameDevice(s, appId)
    const { address: wallet } = await device.create({ accessToken: auth.token })
    const walletKey = wallet.toLowerCase()
    const second = await s.emailLogin(appId, address)
    await linkAccount(s.deps, appId, userId, { type: 'phone', number: '+14155550177' })
    // Rows that name the user beyond their own tables: a pending code to their address, an
    // analytics event naming them, a wallet rate-limit counter and a fork token.
    expect(
      (
        await s.request('/passwordless/init', {
          appId,
          ip: freshIp(),
          body: { email: address },
        })
      ).status,
    ).toBe(200)
    // Taken from the inbox so the sign-in after the deletion reads its own code.
    await s.smtp.waitForCode(address)
    await s.request('/analytics_events', {
      appId,
      ip: freshIp(),
      body: {
        event_name: 'modal_open',
        client_id: 'c1',
        payload: { user: userId, wallet: walletKey },
      },
    })
    await s.request('/analytics_events', {
      appId,
      ip: freshIp(),
      body: { event_name: 'modal_open', client_id: 'c2', payload: { other: 'someone' } },
    })
    expect(
      (
        await s.request('/sessions/fork', {
          appId,
          ip: freshIp(),
          body: { refresh_token: second.refresh_token },
        })
      ).status,
    ).toBe(200)
    await s.request('/wallets/passcode/begin', {
      appId,
      token: auth.token,
      headers: { 'sec-fetch-site': 'same-origin' },
      body: { blinded: 'e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76' },
    })
    // Someone else of the same app, who must keep everything.
    const bystander = await s.emailLogin(appId, email())
    await frameDevice(s, appId).create({ accessToken: bystander.token })

    const needles = [userId, address, walletKey, '+14155550177']
    const before = await rowsNaming(s, needles)
    expect(Object.keys(before).length).toBeGreaterThan(5)

    const r = await admin<{ deleted: Record<string, number> }>(
      `/users/${encodeURIComponent(userId)}`,
      { method: 'DELETE' },
    )
    expect(r.status).toBe(200)
    expect(r.body.deleted).toMatchObject({
      users: 1,
      linked_accounts: 3,
      sessions: 2,
      wallets: 1,
      verification_codes: 1,
      analytics_events: 1,
    })
    expect(r.body.deleted.refresh_tokens).toBeGreaterThanOrEqual(2)
    expect(r.body.deleted.fork_tokens).toBe(1)
    expect(r.body.deleted.rate_limits).toBeGreaterThanOrEqual(1)

    expect(r.body.deleted.webhook_deliveries).toBeGreaterThanOrEqual(2)
    expect(await rowsNaming(s, needles)).toEqual({})
    const events = await s.deps.db
      .selectFrom('webhook_deliveries')
      .select(['event_type', 'payload'])
      .where('app_id', '=', appId)
      .where('event_type', '=', 'user.deleted')
      .execute()
    expect(events).toHaveLength(1)
    expect(JSON.parse(events[0]?.payload ?? '{}').data).toEqual({ id: userId })

    // Sessions end at once: the refresh token and the access token are refused.
    const refresh = await s.request<ErrorBody>('/sessions', {
      appId,
      body: { refresh_token: auth.refresh_token },
    })
    expect(refresh.status).toBe(401)
    await expect(device.recover({ address: wallet, accessToken: auth.token })).rejects.toThrow()
    // Signing in again makes a new user with no wallet: nothing to recover.
    const again = await s.emailLogin(appId, address)
    expect(again.is_new_user).toBe(true)
    expect(again.user.id).not.toBe(userId)
    await expect(
      frameDevice(s, appId).recover({ address: wallet, accessToken: again.token }),
    ).rejects.toThrow()
    const shares = await s.request('/wallets/shares', {
      appId,
      token: again.token,
      headers: { 'sec-fetch-site': 'same-origin' },
      body: { address: wallet },
    })
    expect(shares.status).toBeGreaterThanOrEqual(400)

    // The bystander is untouched; deleting twice answers 404.
    expect((await admin<User>(`/users/${encodeURIComponent(bystander.user.id)}`)).status).toBe(200)
    expect(
      (await s.request('/sessions', { appId, body: { refresh_token: bystander.refresh_token } }))
        .status,
    ).toBe(200)
    const twice = await admin<ErrorBody>(`/users/${encodeURIComponent(userId)}`, {
      method: 'DELETE',
    })
    expect(twice.status).toBe(404)
  })

  test('race: a deletion racing the user’s sign-in answers no 5xx; the sign-in ends as the old user or a new one', async () => {
    const { s, appId, admin } = await setup()
    const outcomes: number[][] = []
    for (let i = 0; i < 8; i++) {
      const address = email()
      const first = await s.emailLogin(appId, address)
      const ip = freshIp()
      await s.request('/passwordless/init', { appId, ip, body: { email: address } })
      const code = await s.smtp.waitForCode(address)
      const [auth, deleted] = await Promise.all([
        s.request<{ user: User }>('/passwordless/authenticate', {
          appId,
          ip,
          body: { email: address, code },
        }),
        admin(`/users/${encodeURIComponent(first.user.id)}`, { method: 'DELETE' }),
      ])
      outcomes.push([auth.status, deleted.status])
      expect(deleted.status).toBe(200)
      // 422: the deletion took the pending code first.
      expect([200, 422]).toContain(auth.status)
      // Whoever holds the address afterwards is not the deleted user.
      const holder = await admin<User>(`/users/by-email?email=${encodeURIComponent(address)}`)
      if (holder.status === 200) expect(holder.body.id).not.toBe(first.user.id)
    }
    expect(outcomes.flat().every((status) => status < 500)).toBe(true)

    // A session fork redeemed while its user is deleted: refused, not a 500.
    for (let i = 0; i < 8; i++) {
      const auth = await s.emailLogin(appId, email())
      const fork = await s.request<{ new_session_refresh_token: string }>('/sessions/fork', {
        appId,
        ip: freshIp(),
        body: { refresh_token: auth.refresh_token },
      })
      expect(fork.status).toBe(200)
      const [redeemed, deleted] = await Promise.all([
        s.request('/sessions/fork/recover', {
          appId,
          ip: freshIp(),
          body: { refresh_token: fork.body.new_session_refresh_token },
        }),
        admin(`/users/${encodeURIComponent(auth.user.id)}`, { method: 'DELETE' }),
      ])
      expect(deleted.status).toBe(200)
      // 404: the session opened, then the user it answers was gone.
      expect([200, 401, 404]).toContain(redeemed.status)
    }
  })

  test('behavior: latch apps secret create|list|revoke, and the created secret opens the user API', async () => {
    const s = get()
    // The CLI opens its own connection: only PostgreSQL is shared with the server in process.
    if (s.backend !== 'postgres') return
    const app = await s.newApp()
    const env = { DATABASE_URL: s.deps.config.databaseUrl as string, LATCH_SECRET: TEST_SECRET }
    const cli = (...argv: string[]) => latchCli(env, ...argv)
    const created = await cli('apps', 'secret', 'create', app.id, '--json')
    expect(created.code).toBe(0)
    const { secret, id } = JSON.parse(created.out) as { secret: string; id: string }
    const call = () =>
      s.request(`/admin/apps/${app.id}/users`, {
        appId: null,
        headers: { authorization: `Bearer ${secret}` },
      })
    expect((await call()).status).toBe(200)
    const listed = await cli('apps', 'secret', 'list', app.id)
    expect(listed.out).toContain(id)
    expect(listed.out).not.toContain(secret)
    expect((await cli('apps', 'secret', 'revoke', app.id, id)).code).toBe(0)
    expect((await call()).status).toBe(401)
    expect((await cli('apps', 'secret', 'revoke', app.id, 'nope')).code).toBe(1)
    expect((await cli('apps', 'secret', 'list', 'x'.repeat(25))).code).toBe(1)
    expect((await cli('apps', 'secret', 'rotate', app.id)).code).toBe(2)
    expect((await cli('apps', 'secret', 'create')).code).toBe(2)
  })
})
