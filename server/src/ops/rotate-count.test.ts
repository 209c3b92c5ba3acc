/**
 * `latch secret rotate` counts rows, one each, in its progress lines, its summary per table and
 * its total alike: an app holding two sealed values (its OAuth settings and a node URL) is one
 * row everywhere.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { createAppRecord } from '../apps/service.ts'
import { openServices } from '../index.ts'
import { latchCli } from '../testing/cli.ts'
import { migratedFolder } from '../testing/global-setup.ts'
import { TEST_SECRET } from '../testing/test-server.ts'

const NEW_SECRET = 'rotated-secret-rotated-secret-rotated-0123456789'
const dir = mkdtempSync(join(tmpdir(), 'latch-rotate-count-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('behavior: secret rotate prints one count per table, in rows, the same in its progress and its summary', async () => {
  // The run's migrated database in the folder: the rotation, not the folder's creation, is tested.
  const base = { NODE_ENV: 'test', LATCH_DATA_DIR: await migratedFolder(join(dir, 'data')) }
  const before = await openServices({ env: { ...base, LATCH_SECRET: TEST_SECRET }, log: () => {} })
  try {
    await createAppRecord(before.deps, {
      name: 'Two sealed values',
      allowedOrigins: ['https://shop.example'],
      rpcUrls: { '1': 'https://node.example/key' },
      oauth: { google: { clientId: 'client', clientSecret: 'oauth-secret' } },
    })
  } finally {
    await before.close()
  }
  const env = { ...base, LATCH_SECRET: NEW_SECRET, LATCH_SECRET_PREVIOUS: TEST_SECRET }
  const check = await latchCli(env, 'secret', 'rotate', '--check')
  expect(check.code).toBe(1)
  expect(check.out).toContain(
    'apps: 1 row(s) under the previous secret, 0 already under the new secret',
  )
  const run = await latchCli(env, 'secret', 'rotate')
  expect(run.code).toBe(0)
  expect(run.err).toContain('[latch] apps: 1 row(s) done')
  expect(run.out).toContain('apps: 1 row(s) sealed again, 0 already under the new secret')
  // Every table's progress and summary agree, and the total is their sum.
  const done = new Map(
    [...run.err.matchAll(/\[latch\] ([\w.]+): (\d+) row\(s\) done/g)].map((m) => [
      m[1],
      Number(m[2]),
    ]),
  )
  let total = 0
  for (const [, table, sealed, current] of run.out.matchAll(
    /^([\w.]+): (\d+) row\(s\) sealed again, (\d+) already under the new secret$/gm,
  )) {
    expect([table, Number(sealed) + Number(current)]).toEqual([table, done.get(table ?? '') ?? 0])
    total += Number(sealed)
  }
  expect(run.out).toContain(`Sealed ${total} row(s) again under the new secret`)
  expect((await latchCli(env, 'secret', 'rotate', '--check')).code).toBe(0)
}, 120_000)
