/**
 * `latch sponsor` and `latch delegate deploy --app` on a database as an operator runs them:
 * make an app's sponsor, set its policy, list it, and deploy the delegate with the sponsor
 * paying through the app's node (anvil, Prague rules).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LATCH_DELEGATE_ADDRESS, type ServerAppConfig } from '@latch/shared'
import { createPublicClient, createWalletClient, type Hex, http, parseEther } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { mainnet } from 'viem/chains'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { ANVIL_ACCOUNTS, type RunningAnvil, startAnvil } from '../testing/anvil.ts'
import { latchCli } from '../testing/cli.ts'
import { type RunningPostgres, runPostgres } from '../testing/index.ts'
import { TEST_SECRET } from '../testing/test-server.ts'
import type { SponsorView } from './cli.ts'

const TOKEN = '0x5FbDB2315678afecb367f032d93F642f64180aa3'

let pg: RunningPostgres | null = null
let anvil: RunningAnvil
let env: Record<string, string> = {}
let dir = ''

beforeAll(async () => {
  // PostgreSQL opens fast; without it the CLI runs on a PGlite data folder (slower to open).
  dir = mkdtempSync(join(tmpdir(), 'latch-sponsor-cli-'))
  ;[pg, anvil] = await Promise.all([runPostgres(), startAnvil({ chainId: 1, hardfork: 'prague' })])
  env = pg
    ? { DATABASE_URL: await pg.createDatabase(), LATCH_SECRET: TEST_SECRET }
    : { LATCH_DATA_DIR: dir }
})
afterAll(async () => {
  await Promise.all([pg?.close(), anvil?.stop()])
  rmSync(dir, { recursive: true, force: true })
})

const cli = (...argv: string[]) => latchCli(env, ...argv)

test('sponsor create, policy and list; delegate deploy --app with the sponsor paying', async () => {
  const created = await cli(
    ...['apps', 'create', '--name', 'Shop', '--origin', 'http://localhost:5173'],
    ...['--rpc-url', `1=${anvil.url}`, '--json'],
  )
  expect(created.code, created.err).toBe(0)
  const app = (JSON.parse(created.out) as ServerAppConfig).id

  const made = await cli('sponsor', 'create', '--app', app, '--chain', '1', '--json')
  expect(made.code, made.err).toBe(0)
  const sponsor = JSON.parse(made.out) as SponsorView
  expect(sponsor).toMatchObject({ chainId: 1, policy: { contracts: {} }, spentTodayWei: '0' })
  expect(sponsor.address).toMatch(/^0x[0-9a-fA-F]{40}$/)
  const again = await cli('sponsor', 'create', '--app', app, '--chain', '1')
  expect(again.code).toBe(1)
  expect(again.err).toContain(`App ${app} already has a sponsor on chain 1`)

  const policy = await cli(
    ...['sponsor', 'policy', '--app', app, '--chain', '1'],
    ...['--allow', `${TOKEN}:approve(address,uint256)`, '--allow', `${TOKEN}:0xa9059cbb`],
    ...['--gas-cap', '300000', '--user-daily', '0.01eth', '--app-daily', '1eth', '--json'],
  )
  expect(policy.code, policy.err).toBe(0)
  expect((JSON.parse(policy.out) as SponsorView).policy).toEqual({
    contracts: { [TOKEN.toLowerCase()]: ['0x095ea7b3', '0xa9059cbb'] },
    gasCapPerBatch: 300_000,
    userDailyWei: '10000000000000000',
    appDailyWei: '1000000000000000000',
  })
  const listed = await cli('sponsor', 'list', '--app', app)
  expect(listed.out).toContain(`chain 1: sponsor ${sponsor.address}`)
  expect(listed.out).toContain('0x095ea7b3, 0xa9059cbb')
  expect(listed.out).toContain('0.01 ETH')

  // Unfunded, the sponsor cannot pay the deployment: the node says so, nothing lands.
  const poor = await cli('delegate', 'deploy', '--chain', '1', '--app', app)
  expect(poor.code).toBe(1)
  const client = createPublicClient({ chain: mainnet, transport: http(anvil.url) })
  expect(await client.getCode({ address: LATCH_DELEGATE_ADDRESS })).toBeUndefined()

  const funder = createWalletClient({
    account: privateKeyToAccount(ANVIL_ACCOUNTS[0].privateKey),
    chain: mainnet,
    transport: http(anvil.url),
  })
  await client.waitForTransactionReceipt({
    hash: await funder.sendTransaction({ to: sponsor.address as Hex, value: parseEther('1') }),
  })
  const deployed = await cli('delegate', 'deploy', '--chain', '1', '--app', app, '--json')
  expect(deployed.code, deployed.err).toBe(0)
  expect(JSON.parse(deployed.out)).toMatchObject({ chainId: 1, address: LATCH_DELEGATE_ADDRESS })
  expect(await client.getCode({ address: LATCH_DELEGATE_ADDRESS })).toBeTruthy()
  expect(await client.getBalance({ address: sponsor.address as Hex })).toBeLessThan(parseEther('1'))
})

test('refusals: an unknown app, a chain without a sponsor, no setting, two key sources', async () => {
  const none = await cli('sponsor', 'create', '--app', 'nope', '--chain', '1')
  expect(none.code).toBe(1)
  expect(none.err).toContain("No app with id 'nope'")
  const created = await cli('apps', 'create', '--name', 'Other', '--origin', 'http://localhost:1')
  const app = /Created app (\w+)/.exec(created.out)?.[1] ?? ''
  const noSponsor = await cli('delegate', 'deploy', '--chain', '1', '--app', app)
  expect(noSponsor.code).toBe(1)
  expect(noSponsor.err).toContain(`App ${app} has no sponsor on chain 1`)
  await cli('sponsor', 'create', '--app', app, '--chain', '1')
  const nothing = await cli('sponsor', 'policy', '--app', app, '--chain', '1')
  expect(nothing.code).toBe(2)
  expect(nothing.err).toContain('sponsor policy needs a setting')
  const both = await latchCli(
    { ...env, K: ANVIL_ACCOUNTS[1].privateKey },
    ...['delegate', 'deploy', '--chain', '1', '--app', app, '--key-env', 'K'],
  )
  expect(both.code).toBe(2)
  expect(both.err).toContain('exactly one of --key-file, --key-env and --app')
})
