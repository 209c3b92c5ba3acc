/**
 * An upgrade from an earlier schema: server/test-fixtures/upgrade/ holds a database as it was
 * at an earlier migration (the migrations up to `manifest.json`'s `schema`, replayed, and then
 * `data.sql`: users, sessions, signing keys and both kinds of wallet). `latch migrate` brings it
 * up to date, and then everyone signs in, refreshes and recovers, on PGlite and PostgreSQL.
 *
 * Regenerate the fixture (at a release, moving `FIXTURE_SCHEMA` to its last migration):
 *   LATCH_WRITE_UPGRADE_FIXTURE=1 npx vitest run --project server server/src/ops/upgrade.test.ts
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import type { AuthResponse } from '@latch/shared'
import { Kysely, Migrator, sql } from 'kysely'
import { afterAll, describe, expect, test } from 'vitest'
import { runCli } from '../cli.ts'
import { openDatabase } from '../db/index.ts'
import { MIGRATIONS } from '../db/migrations.ts'
import { pgliteDialect } from '../db/pglite-dialect.ts'
import { frameDevice } from '../testing/frame-fetch.ts'
import { blankFolder } from '../testing/global-setup.ts'
import { postgresAvailable, type RunningPostgres, runPostgres } from '../testing/postgres.ts'
import { startTestServer } from '../testing/test-server.ts'

const FIXTURE_DIR = resolve(import.meta.dirname, '../../test-fixtures/upgrade')
/** The last migration of the schema the fixture is written for. */
const FIXTURE_SCHEMA = '0010_fork_wallet_confirmation'
/** Tables whose rows live minutes at most, or are counters: not worth keeping. */
const SKIPPED = new Set([
  'kysely_migration',
  'kysely_migration_lock',
  'analytics_events',
  'rate_limits',
  'verification_codes',
  'oauth_states',
  'siwe_nonces',
])

interface Manifest {
  schema: string
  /** When it was written (its sessions' times are moved by the age of the fixture). */
  writtenAt: string
  /** The server secret the data was sealed under (a test value: it protects nothing else). */
  secret: string
  appId: string
  users: {
    email: string
    userId: string
    address: string
    recoveryMethod: 'latch' | 'user-passcode'
    passcode: string | null
    refreshToken: string
  }[]
}

const write = process.env.LATCH_WRITE_UPGRADE_FIXTURE === '1'

/** A database migrated up to `name` only: the schema of that release. */
async function migrateTo(db: Kysely<unknown>, name: string): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => ({ ...MIGRATIONS }) },
  })
  const { error } = await migrator.migrateTo(name)
  if (error) throw error
}

/** One SQL literal of a value read back from PGlite. */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL'
  if (typeof value === 'boolean' || typeof value === 'number') return String(value)
  if (value instanceof Date) return `'${value.toISOString()}'`
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  return `'${text.replaceAll("'", "''")}'`
}

describe.runIf(write)('upgrade fixture', () => {
  test('writes server/test-fixtures/upgrade from a database this release fills', async () => {
    const secret = 'upgrade-fixture-secret-upgrade-fixture-0123456789'
    const started = await startTestServer('pglite', 'memory://', { LATCH_SECRET: secret })
    const s = started.server
    const old = new Kysely<unknown>({ dialect: pgliteDialect(new PGlite()) })
    try {
      const app = await s.newApp({ name: 'Upgrade fixture' })
      const users: Manifest['users'] = []
      for (const [email, passcode] of [
        ['auto@upgrade.example', null],
        ['pin@upgrade.example', 'Up9rd3'],
      ] as const) {
        const auth = await s.emailLogin(app.id, email)
        const { address } = await frameDevice(s, app.id).create({
          accessToken: auth.token,
          ...(passcode ? { recoveryPin: passcode } : {}),
        })
        users.push({
          email,
          userId: auth.user.id,
          address,
          recoveryMethod: passcode ? 'user-passcode' : 'latch',
          passcode,
          refreshToken: auth.refresh_token,
        })
      }
      // The earlier schema: which tables and columns it had, and the order foreign keys need.
      await migrateTo(old, FIXTURE_SCHEMA)
      const tables = (await old.introspection.getTables()).filter((t) => !SKIPPED.has(t.name))
      const { rows: refs } = await sql<{ child: string; parent: string }>`
        SELECT conrelid::regclass::text AS child, confrelid::regclass::text AS parent
        FROM pg_constraint WHERE contype = 'f'`.execute(old)
      const ordered: typeof tables = []
      const placed = new Set<string>()
      while (ordered.length < tables.length) {
        const next = tables.find(
          (t) =>
            !placed.has(t.name) &&
            refs.every((r) => r.child !== t.name || r.parent === t.name || placed.has(r.parent)),
        )
        if (!next) throw new Error('foreign keys form a cycle')
        ordered.push(next)
        placed.add(next.name)
      }
      const lines = [
        `-- Latch data at schema ${FIXTURE_SCHEMA}, written by server/src/ops/upgrade.test.ts.`,
        '-- Load after replaying the migrations up to that one; see README.md beside it.',
      ]
      for (const table of ordered) {
        const columns = table.columns.map((c) => c.name)
        const { rows } = await sql<Record<string, unknown>>`
          SELECT ${sql.join(columns.map((c) => sql.ref(c)))} FROM ${sql.table(table.name)}
          ORDER BY 1`.execute(s.deps.db)
        for (const row of rows) {
          lines.push(
            `INSERT INTO ${table.name} (${columns.join(', ')}) VALUES (${columns
              .map((c) => literal(row[c]))
              .join(', ')});`,
          )
        }
      }
      mkdirSync(FIXTURE_DIR, { recursive: true })
      writeFileSync(join(FIXTURE_DIR, 'data.sql'), `${lines.join('\n')}\n`)
      const manifest: Manifest = {
        schema: FIXTURE_SCHEMA,
        writtenAt: new Date().toISOString(),
        secret,
        appId: app.id,
        users,
      }
      writeFileSync(join(FIXTURE_DIR, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
    } finally {
      await old.destroy()
      await started.close()
    }
  }, 60_000)
})

let pg: Promise<RunningPostgres | null> | undefined
afterAll(async () => {
  await (await pg)?.close()
})

for (const backend of ['pglite', 'postgres'] as const) {
  const skip = write || (backend === 'postgres' && !postgresAvailable())
  describe.skipIf(skip)(`upgrade from an earlier schema [${backend}]`, () => {
    test('latch migrate brings the fixture up to date; everyone signs in, refreshes and recovers', async () => {
      const manifest = JSON.parse(
        readFileSync(join(FIXTURE_DIR, 'manifest.json'), 'utf8'),
      ) as Manifest
      const data = readFileSync(join(FIXTURE_DIR, 'data.sql'), 'utf8')
      const dir = mkdtempSync(join(tmpdir(), 'latch-upgrade-'))
      // On PGlite the run's blank cluster in the folder (the migrations are the subject, not the
      // cluster's creation).
      if (backend === 'pglite') await blankFolder(dir)
      let databaseUrl = ''
      if (backend === 'postgres') {
        pg ??= runPostgres()
        const running = await pg
        if (!running) throw new Error('PostgreSQL did not start')
        databaseUrl = await running.createDatabase()
      }
      const env = {
        NODE_ENV: 'test',
        LATCH_DATA_DIR: dir,
        DATABASE_URL: databaseUrl,
        LATCH_SECRET: manifest.secret,
      }
      try {
        // The earlier release's database: its migrations, then its data.
        const old = await openDatabase(
          { databaseUrl: databaseUrl || null, dataDir: dir },
          {
            migrate: false,
          },
        )
        try {
          await migrateTo(old.db as Kysely<unknown>, manifest.schema)
          // One statement at a time: PGlite prepares each and refuses several in one.
          const statements = data
            .split(/;\n(?=INSERT |$)/)
            .map((t) => t.replace(/^(--.*\n)+/, '').trim())
            .filter((t) => t !== '')
          for (const statement of statements) await sql.raw(statement).execute(old.db)
          // Sessions end a fixed time after their sign-in: move the fixture's to today, as if it had
          // been written now, so the test does not expire with them.
          await sql`UPDATE sessions SET created_at = created_at + (now() - ${new Date(manifest.writtenAt)}::timestamptz),
            expires_at = expires_at + (now() - ${new Date(manifest.writtenAt)}::timestamptz)`.execute(
            old.db,
          )
        } finally {
          await old.close()
        }

        const out: string[] = []
        const io = { out: (t: string) => out.push(t), err: (t: string) => out.push(t), env }
        expect(await runCli(['migrate', '--check'], io)).toBe(1)
        expect(await runCli(['migrate'], io)).toBe(0)
        const later = Object.keys(MIGRATIONS).filter((m) => m > manifest.schema)
        expect(later.length).toBeGreaterThan(0)
        expect(out.join('\n')).toContain(`Ran ${later.length} migration(s)`)
        expect(await runCli(['migrate', '--check'], io)).toBe(0)

        const started = await startTestServer(backend, databaseUrl, env)
        try {
          const s = started.server
          for (const user of manifest.users) {
            // A session from before the upgrade refreshes.
            const refreshed = await s.request<AuthResponse>('/sessions', {
              appId: manifest.appId,
              body: { refresh_token: user.refreshToken },
            })
            expect(refreshed.status).toBe(200)
            expect(refreshed.body.user.id).toBe(user.userId)
            // The user signs in on a new device and recovers the wallet there.
            const auth = await s.emailLogin(manifest.appId, user.email)
            expect(auth.user.id).toBe(user.userId)
            expect(auth.is_new_user).toBe(false)
            const wallet = auth.user.linkedAccounts.find((a) => a.type === 'wallet')
            expect(wallet).toMatchObject({ recoveryMethod: user.recoveryMethod })
            await frameDevice(s, manifest.appId).recover({
              address: user.address as `0x${string}`,
              accessToken: auth.token,
              ...(user.passcode ? { recoveryPin: user.passcode } : {}),
            })
          }
        } finally {
          await started.close()
        }
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }, 120_000)
  })
}
