import { Kysely, sql } from 'kysely'
import { afterAll, expect, test, vi } from 'vitest'
import { blankPglite } from '../testing/global-setup.ts'
import { pgliteDialect } from './pglite-dialect.ts'

const db = new Kysely<{ t: { v: number } }>({ dialect: pgliteDialect(blankPglite()) })
afterAll(() => db.destroy())

test('behavior: transactions on the one PGlite connection never interleave', async () => {
  await sql`CREATE TABLE t (v integer)`.execute(db)
  await db.insertInto('t').values({ v: 0 }).execute()
  // Read-modify-write with a pause inside: interleaving would lose increments.
  await Promise.all(
    Array.from({ length: 10 }, () =>
      db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('t').select('v').executeTakeFirstOrThrow()
        await new Promise((r) => setTimeout(r, 2))
        await trx
          .updateTable('t')
          .set({ v: row.v + 1 })
          .execute()
      }),
    ),
  )
  expect((await db.selectFrom('t').select('v').executeTakeFirstOrThrow()).v).toBe(10)
})

test('error: a failed transaction rolls back and frees the connection', async () => {
  await expect(
    db.transaction().execute(async (trx) => {
      await trx.updateTable('t').set({ v: 99 }).execute()
      throw new Error('boom')
    }),
  ).rejects.toThrow('boom')
  expect((await db.selectFrom('t').select('v').executeTakeFirstOrThrow()).v).toBe(10)
})

test('error: using the database handle inside a transaction fails after the timeout instead of hanging', async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
  try {
    const outcome = db.transaction().execute(async () => {
      const inner = db.selectFrom('t').select('v').execute()
      inner.catch(() => {}) // rejects while the timers run; awaited below
      await vi.advanceTimersByTimeAsync(30_001)
      return inner
    })
    await expect(outcome).rejects.toThrow(/Waited 30000 ms for the PGlite connection/)
  } finally {
    vi.useRealTimers()
  }
  expect((await db.selectFrom('t').select('v').executeTakeFirstOrThrow()).v).toBe(10)
})
