/**
 * The sponsor's stored parts: its key sealed for its row and sealed again by `secret rotate`,
 * its row MAC (a policy widened in the database pays for nothing), and the policy's rules as
 * the CLI and the operator API write them.
 */
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createSecrets } from '../crypto.ts'
import { rotateSecret } from '../ops/rotate.ts'
import { startTestServer, TEST_SECRET, type TestServer } from '../testing/test-server.ts'
import { parseAmount, policyPatch } from './cli.ts'
import {
  applyPolicy,
  createSponsor,
  DEFAULT_POLICY,
  findSponsor,
  policyText,
  sponsorKey,
  updatePolicy,
} from './store.ts'

const NEW_SECRET = 'the-new-secret-the-new-secret-the-new-0123456789'
const TOKEN = '0x5FbDB2315678afecb367f032d93F642f64180aa3'

describe('the sponsor row', () => {
  let server: TestServer
  let close: () => Promise<void>
  beforeAll(async () => {
    ;({ server, close } = await startTestServer('pglite', 'memory://'))
  })
  afterAll(async () => {
    await close?.()
  })

  test('its key is sealed for its row, sealed again by secret rotate; a widened policy pays for nothing', async () => {
    // One database; the processes before, during and after a rotation differ only by their
    // secrets.
    {
      const a = server.deps
      const app = await server.newApp()
      const made = await createSponsor(a, app.id, 1)
      const key = await sponsorKey(a, made.id)
      expect(privateKeyToAccount(key).address).toBe(made.address)
      const row = await a.db
        .selectFrom('sponsors')
        .select('private_sealed')
        .where('id', '=', made.id)
        .executeTakeFirstOrThrow()
      expect(row.private_sealed).not.toContain(key.slice(2))
      // Sealed for its own row: opened for another, it does not open.
      expect(() => a.secrets.decrypt(row.private_sealed, 'sponsor-key:spn_other')).toThrow()

      const b = { ...a, secrets: createSecrets(NEW_SECRET, TEST_SECRET) }
      expect(await findSponsor(b, app.id, 1)).not.toBeNull()
      const report = await rotateSecret(b)
      expect(report.tables.sponsors?.resealed).toBe(1)

      const c = { ...a, secrets: createSecrets(NEW_SECRET) }
      expect((await findSponsor(c, app.id, 1))?.address).toBe(made.address)
      expect(await sponsorKey(c, made.id)).toBe(key)
      // Under the old secret alone, neither the key nor the MAC holds any more.
      expect(await findSponsor(a, app.id, 1)).toBeNull()

      // A database writer widens the policy: the row's MAC no longer holds.
      const wide = policyText(applyPolicy(DEFAULT_POLICY, { contracts: { [TOKEN]: ['*'] } }))
      await a.db.updateTable('sponsors').set({ policy: wide }).where('id', '=', made.id).execute()
      expect(await findSponsor(c, app.id, 1)).toBeNull()
      expect(server.logs.join('\n')).toContain('refused sponsor')
    }
  })

  test('a policy written through the store keeps its MAC', async () => {
    {
      const app = await server.newApp()
      await createSponsor(server.deps, app.id, 1)
      const updated = await updatePolicy(server.deps, app.id, 1, {
        contracts: { [TOKEN]: ['0x095ea7b3'] },
        gasCapPerBatch: 300_000,
      })
      expect((await findSponsor(server.deps, app.id, 1))?.policy).toEqual(updated.policy)
    }
  })
})

describe('policy rules', () => {
  test('contracts, selectors, caps and amounts are checked', () => {
    const p = applyPolicy(DEFAULT_POLICY, { contracts: { [TOKEN]: ['0x095EA7B3', '0xa9059cbb'] } })
    expect(p.contracts[TOKEN.toLowerCase()]).toEqual(['0x095ea7b3', '0xa9059cbb'])
    expect(applyPolicy(p, { contracts: { [TOKEN]: [] } }).contracts).toEqual({})
    expect(() => applyPolicy(p, { contracts: { nope: ['*'] } })).toThrow(/is not an address/)
    expect(() => applyPolicy(p, { contracts: { [TOKEN]: ['approve'] } })).toThrow(/selector/)
    expect(() => applyPolicy(p, { contracts: { [TOKEN]: ['*', '0x095ea7b3'] } })).toThrow(
      /stands alone/,
    )
    expect(() => applyPolicy(p, { gasCapPerBatch: 100 })).toThrow(/gasCapPerBatch/)
    expect(() => applyPolicy(p, { userDailyWei: '-1' })).toThrow(/userDailyWei/)
  })

  test('the CLI reads functions by signature or selector, and amounts in wei or ETH', () => {
    const patch = policyPatch(
      {
        allow: [`${TOKEN}:approve(address,uint256)`, `${TOKEN}:0xA9059CBB`],
        'gas-cap': '250000',
        'user-daily': '0.01eth',
        'app-daily': '1000',
      },
      DEFAULT_POLICY,
    )
    expect(patch).toEqual({
      contracts: { [TOKEN.toLowerCase()]: ['0x095ea7b3', '0xa9059cbb'] },
      gasCapPerBatch: 250_000,
      userDailyWei: '10000000000000000',
      appDailyWei: '1000',
    })
    expect(policyPatch({ allow: [TOKEN] }, DEFAULT_POLICY).contracts).toEqual({
      [TOKEN.toLowerCase()]: ['*'],
    })
    expect(policyPatch({ disallow: [TOKEN] }, DEFAULT_POLICY).contracts).toEqual({
      [TOKEN.toLowerCase()]: [],
    })
    expect(() => policyPatch({ allow: [`${TOKEN}:nope(`] }, DEFAULT_POLICY)).toThrow(
      /neither a selector/,
    )
    expect(() => parseAmount('lots', 'user-daily')).toThrow(/takes wei/)
  })
})
