/**
 * The outbox stays cheap as it grows (PostgreSQL): with 50,000 finished deliveries and their
 * attempts in the table, analyzed, the statements of an event's life (the enqueue, the lease,
 * the record, the prune, a replay by event or delivery id) scan no webhook table in full.
 */
import { type CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { afterAll, expect, test } from 'vitest'
import type { Database } from '../db/schema.ts'
import { openServices } from '../index.ts'
import { postgresAvailable, type RunningPostgres, runPostgres } from '../testing/index.ts'
import { TEST_SECRET } from '../testing/test-server.ts'
import { type Receiver, startReceiver } from '../testing/webhook-receiver.ts'
import { addEndpoint } from './endpoints.ts'
import { enqueueEvent } from './events.ts'
import { createWebhookWorker, replay } from './worker.ts'

const ROWS = 50_000
const WEBHOOK_TABLES = new Set(['webhook_endpoints', 'webhook_deliveries', 'webhook_attempts'])

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  Plans?: PlanNode[]
}

function seqScans(node: PlanNode): string[] {
  const own =
    node['Node Type'] === 'Seq Scan' && node['Relation Name'] ? [node['Relation Name']] : []
  return [...own, ...(node.Plans ?? []).flatMap(seqScans)]
}

let postgres: RunningPostgres | null = null
let hook: Receiver | undefined
afterAll(async () => {
  await hook?.close()
  await postgres?.close()
})

test.skipIf(!postgresAvailable())(
  'performance: enqueue, lease, record, prune and replay use indexes once the outbox has grown [postgres]',
  async () => {
    postgres = await runPostgres()
    if (!postgres) throw new Error('PostgreSQL did not start')
    const url = await postgres.createDatabase()
    const services = await openServices({
      env: { DATABASE_URL: url, LATCH_SECRET: TEST_SECRET, NODE_ENV: 'test' },
      log: () => {},
    })
    const pool = new pg.Pool({ connectionString: url, max: 2 })
    const captured: CompiledQuery[] = []
    const logged = new Kysely<Database>({
      dialect: new PostgresDialect({ pool }),
      log: (event) => {
        if (event.level === 'query') captured.push(event.query)
      },
    })
    try {
      const { db } = services.deps
      hook = await startReceiver()
      const apps = await Promise.all(
        [1, 2, 3].map((i) =>
          services.admin.createApp({
            name: `Plans ${i}`,
            allowedOrigins: ['http://localhost:5173'],
            loginMethods: ['email'],
          }),
        ),
      )
      const endpoints = await Promise.all(
        apps.map((app) => addEndpoint(services.deps, app.id, { url: hook?.url ?? '' })),
      )
      const [app, endpoint] = [apps[0], endpoints[0]]
      if (!app || !endpoint) throw new Error('no app')
      const now = new Date()
      // A week of finished deliveries spread over the apps, each with its attempt.
      await sql`INSERT INTO webhook_deliveries (id, event_id, endpoint_id, app_id, event_type,
          payload, status, attempts, next_attempt_at, retry_until, created_at, finished_at)
        SELECT 'dlv_fill' || g, 'msg_fill' || g, e.id, e.app_id, 'user.authenticated',
          '{"type":"user.authenticated","data":{"user":{"id":"did:latch:fill' || g || '"}}}',
          'delivered', 1, ${now}, ${now}, ${now}::timestamptz - (g || ' seconds')::interval,
          ${now}::timestamptz - (g || ' seconds')::interval
        FROM generate_series(1, ${ROWS}) g
        JOIN webhook_endpoints e ON e.id = (ARRAY[${sql.join(endpoints.map((e) => e.id))}])[1 + g % 3]`.execute(
        db,
      )
      await sql`INSERT INTO webhook_attempts (delivery_id, attempted_at, duration_ms, status_code)
        SELECT id, created_at, 12, 204 FROM webhook_deliveries`.execute(db)
      await sql`ANALYZE`.execute(db)
      const { count } = await db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .executeTakeFirstOrThrow()
      expect(Number(count)).toBe(ROWS)

      const deps = { ...services.deps, db: logged }
      const eventId = await enqueueEvent(logged, {
        appId: app.id,
        type: 'user.created',
        data: { user: { id: 'did:latch:plans' } },
        now,
      })
      expect(await createWebhookWorker(deps).runOnce()).toBe(1)
      await hook.waitFor(1)
      expect((await replay(deps, eventId)).queued).toBe(1)
      const [delivery] = await db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('event_id', '=', eventId)
        .execute()
      expect((await replay(deps, delivery?.id ?? '')).queued).toBe(1)

      const statements = captured.filter((q) =>
        /^\s*(select|insert|update|delete|with)\b/i.test(q.sql),
      )
      // enqueue, prune, lease, record, and two replays (a read and an update each).
      expect(statements.length).toBeGreaterThanOrEqual(8)
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        const scans: { sql: string; tables: string[] }[] = []
        for (const q of statements) {
          const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
            `EXPLAIN (FORMAT JSON) ${q.sql}`,
            q.parameters as unknown[],
          )
          const plan = rows[0]?.['QUERY PLAN'][0]?.Plan
          if (!plan) throw new Error(`no plan for ${q.sql}`)
          // The endpoints table is a handful of rows per app; only the growing ones count.
          const tables = seqScans(plan).filter(
            (t) => WEBHOOK_TABLES.has(t) && t !== 'webhook_endpoints',
          )
          if (tables.length > 0) scans.push({ sql: q.sql, tables })
        }
        expect(scans).toEqual([])
      } finally {
        await client.end()
      }
    } finally {
      await logged.destroy()
      await services.close()
    }
  },
  180_000,
)
