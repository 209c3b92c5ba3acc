import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ServerAppConfig } from '@latch/shared'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { findApp } from './apps/service.ts'
import { USAGE } from './cli.ts'
import type { Deps } from './context.ts'
import { openServices } from './index.ts'
import { latchCli } from './testing/cli.ts'
import { type RunningPostgres, runPostgres } from './testing/index.ts'
import { TEST_SECRET } from './testing/test-server.ts'

let pg: RunningPostgres | null = null
let env: Record<string, string> = {}
let dir = ''

beforeAll(async () => {
  // PostgreSQL opens fast; without it the CLI runs on a PGlite data folder (slower to open).
  dir = mkdtempSync(join(tmpdir(), 'latch-cli-'))
  pg = await runPostgres()
  env = pg
    ? { DATABASE_URL: await pg.createDatabase(), LATCH_SECRET: TEST_SECRET }
    : { LATCH_DATA_DIR: dir }
})
afterAll(async () => {
  await pg?.close()
  rmSync(dir, { recursive: true, force: true })
})

const cli = (...argv: string[]) => latchCli(env, ...argv)

/** `fn` on services of its own over the CLI's database, closed after (PGlite serves one process). */
async function withServices<T>(fn: (deps: Deps) => Promise<T>): Promise<T> {
  const services = await openServices({ env, log: () => {} })
  try {
    return await fn(services.deps)
  } finally {
    await services.close()
  }
}

const storedApp = (id: string) => withServices((deps) => findApp(deps, id))

test('behavior: apps create prints the id; show, list and update read and change the app', async () => {
  const created = await cli(
    'apps',
    'create',
    '--name',
    'Demo',
    '--origin',
    'http://localhost:5173',
    '--json',
  )
  expect(created.code).toBe(0)
  const app = JSON.parse(created.out) as ServerAppConfig
  expect(app.id).toMatch(/^[a-z0-9]{25}$/)
  expect(app.allowedOrigins).toEqual(['http://localhost:5173'])

  const human = await cli(
    'apps',
    'create',
    '--name',
    'Second',
    '--origin',
    'https://a.example',
    '--origin',
    'https://b.example',
  )
  expect(human.out).toMatch(/^Created app [a-z0-9]{25}\n/)
  expect(human.out).toContain('allowed origins         https://a.example, https://b.example')

  const updated = await cli(
    'apps',
    'update',
    app.id,
    '--login-methods',
    'email,sms,google',
    '--allowlist',
    'on',
    '--allow',
    'vip@example.com',
    '--theme',
    'dark',
    '--accent-color',
    '#123456',
    '--terms',
    'https://example.com/terms',
    '--create-on-login',
    'all-users',
    '--require-passcode',
    'on',
    '--add-origin',
    'https://www.example.com',
    '--custom-api-url',
    'https://auth.example.com',
    '--oauth-json',
    '{"google":{"clientId":"gid","clientSecret":"gsecret"}}',
    '--json',
  )
  expect(updated.code).toBe(0)
  const after = JSON.parse(updated.out) as ServerAppConfig
  expect(after).toMatchObject({
    emailAuth: true,
    smsAuth: true,
    googleOAuth: true,
    walletAuth: false,
    allowlistEnabled: true,
    theme: 'dark',
    accentColor: '#123456',
    termsAndConditionsUrl: 'https://example.com/terms',
    embeddedWalletConfig: { createOnLogin: 'all-users', requireUserPasswordOnCreate: true },
    allowedOrigins: ['http://localhost:5173', 'https://www.example.com'],
    customApiUrl: 'https://auth.example.com',
  })

  const shown = await cli('apps', 'show', app.id)
  expect(shown.out).toContain('login methods           email, sms, google')
  expect(shown.out).toContain('allowlist               on')

  const list = await cli('apps', 'list')
  expect(list.out).toMatch(/^ID\s+NAME\s+ORIGINS/)
  expect(list.out).toContain(`${app.id}  Demo`)
  const listJson = JSON.parse((await cli('apps', 'list', '--json')).out) as ServerAppConfig[]
  expect(listJson.map((a) => a.name)).toEqual(['Demo', 'Second'])
})

test('error: bad commands and settings exit non-zero with a reason', async () => {
  expect((await cli('apps', 'create', '--origin', 'http://x.example')).err).toContain(
    'needs --name',
  )
  expect((await cli('apps', 'create', '--name', 'x')).err).toContain('at least one --origin')
  const unknownMethod = await cli(
    'apps',
    'create',
    '--name',
    'x',
    '--origin',
    'http://x.example',
    '--login-methods',
    'fax',
  )
  expect(unknownMethod.code).toBe(2)
  expect(unknownMethod.err).toContain('Unknown login method(s): fax')
  const badOrigin = await cli('apps', 'create', '--name', 'x', '--origin', 'not a url')
  expect(badOrigin.code).toBe(1)
  expect(badOrigin.err).toContain('allowedOrigins')
  // Wildcards and anything that is not a bare origin, at create and update, each with its reason.
  for (const [bad, why] of [
    ['*', 'wildcards are refused'],
    ['https://*', 'wildcards are refused'],
    ['https://*.example.com', 'wildcards are refused'],
    ['https://x.example/path', 'a path is not allowed'],
    ['https://me:pw@x.example', 'a user name or password is not allowed'],
    ['https://x.example?next=/', 'a query is not allowed'],
  ] as const) {
    const created = await cli('apps', 'create', '--name', 'x', '--origin', bad)
    expect(created.code, bad).toBe(1)
    expect(created.err, bad).toContain(`'${bad}'`)
    expect(created.err, bad).toContain(why)
  }
  const kept = JSON.parse(
    (await cli('apps', 'create', '--name', 'Kept', '--origin', 'https://kept.example', '--json'))
      .out,
  ) as ServerAppConfig
  for (const flag of ['--origin', '--add-origin']) {
    const updated = await cli('apps', 'update', kept.id, flag, 'https://*.kept.example')
    expect(updated.code, flag).toBe(1)
    expect(updated.err, flag).toContain('wildcards are refused')
  }
  const shown = JSON.parse((await cli('apps', 'show', kept.id, '--json')).out) as ServerAppConfig
  expect(shown.allowedOrigins).toEqual(['https://kept.example'])
  const missing = await cli('apps', 'show', 'z'.repeat(25))
  expect(missing.code).toBe(1)
  expect(missing.err).toContain('No app with id')
  expect((await cli('apps', 'frobnicate')).code).toBe(2)
  expect((await cli('--bogus')).code).toBe(2)
  const help = await cli('help')
  expect(help.code).toBe(0)
  expect(help.out).toBe(`${USAGE}\n`)
})

test('behavior: the OAuth feature flags set per-provider settings through apps create and update', async () => {
  const created = await cli(
    'apps',
    'create',
    '--name',
    'Social',
    '--origin',
    'http://localhost:5173',
    '--login-methods',
    'email,google,github',
    '--google-client-id',
    'gid',
    '--google-client-secret',
    'gs',
    '--json',
  )
  expect(created.code).toBe(0)
  const app = JSON.parse(created.out) as ServerAppConfig
  const updated = await cli(
    'apps',
    'update',
    app.id,
    '--google-token-url',
    'http://127.0.0.1:9/token',
    '--github-client-id',
    'hid',
  )
  expect(updated.code).toBe(0)
  const record = await storedApp(app.id)
  expect(record?.oauth.google).toMatchObject({
    clientId: 'gid',
    clientSecret: 'gs',
    endpoints: { tokenUrl: 'http://127.0.0.1:9/token' },
  })
  expect(record?.oauth.github).toMatchObject({ clientId: 'hid' })
  const partial = await cli(
    'apps',
    'update',
    app.id,
    '--apple-token-url',
    'http://127.0.0.1:9/token',
  )
  expect(partial.code).toBe(1)
  expect(partial.err).toContain('--apple-client-id is required')
})

test('behavior: apps rotate-keys signs with the next key; the replaced key verifies until the rotation after', async () => {
  const created = await cli('apps', 'create', '--name', 'Rotating', '--origin', 'https://r.example')
  const id = /Created app ([a-z0-9]{25})/.exec(created.out)?.[1] ?? ''
  expect(id).not.toBe('')
  const withKeys = <T>(fn: (keys: Deps['keys']) => Promise<T>) =>
    withServices((deps) => fn(deps.keys))
  const kidOf = (token: string) =>
    (JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()) as { kid: string })
      .kid
  const before = await withKeys(async (keys) => keys.signAccessToken(id, 'user-1', 'session-1'))
  const oldKid = kidOf(before)

  const first = await cli('apps', 'rotate-keys', id, '--json')
  expect(first.code).toBe(0)
  const answer = JSON.parse(first.out) as { id: string; signingKey: string; previousKey: string }
  expect(answer.previousKey).toBe(oldKid)
  expect(answer.signingKey).not.toBe(oldKid)
  await withKeys(async (keys) => {
    // The token signed before the rotation still verifies and its key is still published.
    await expect(keys.verifyAccessToken(id, before)).resolves.toMatchObject({ sub: 'user-1' })
    expect((await keys.jwks(id)).keys.map((k) => k.kid)).toContain(oldKid)
    expect(kidOf(await keys.signAccessToken(id, 'user-1', 'session-1'))).toBe(answer.signingKey)
  })

  const second = await cli('apps', 'rotate-keys', id)
  expect(second.code).toBe(0)
  expect(second.out).toContain(`Key ${answer.signingKey} keeps verifying`)
  await withKeys(async (keys) => {
    // One rotation later the old key is gone: its tokens no longer verify.
    await expect(keys.verifyAccessToken(id, before)).rejects.toMatchObject({
      code: 'not_authenticated',
    })
    expect((await keys.jwks(id)).keys.map((k) => k.kid)).not.toContain(oldKid)
  })

  const unknown = await cli('apps', 'rotate-keys', 'z'.repeat(25))
  expect(unknown.code).toBe(1)
  expect(unknown.err).toContain('No app with id')
  const noId = await cli('apps', 'rotate-keys')
  expect(noId.code).toBe(2)
  expect(noId.err).toContain('apps rotate-keys needs an app id')
})

test('behavior: --sms-countries sets the countries SMS codes go to; an unknown code is refused', async () => {
  const countriesOf = async (id: string) => (await storedApp(id))?.smsCountries
  const created = await cli(
    'apps',
    'create',
    '--name',
    'Texts',
    '--origin',
    'https://t.example',
    '--json',
  )
  const { id } = JSON.parse(created.out) as ServerAppConfig
  expect(await countriesOf(id)).toEqual(['US'])
  const updated = await cli('apps', 'update', id, '--sms-countries', 'us, CA')
  expect(updated.code).toBe(0)
  expect(await countriesOf(id)).toEqual(['US', 'CA'])
  expect(updated.out).toMatch(/sms countries +US, CA/)
  expect((await cli('apps', 'show', id)).out).toMatch(/sms countries +US, CA/)
  const shown = JSON.parse((await cli('apps', 'show', id, '--json')).out) as {
    smsCountries: string[]
  }
  expect(shown.smsCountries).toEqual(['US', 'CA'])
  const bad = await cli('apps', 'update', id, '--sms-countries', 'US,ZZ')
  expect(bad.code).toBe(1)
  expect(bad.err).toContain(
    'Invalid app settings: smsCountries.1 must list two-letter country codes',
  )
  expect(await countriesOf(id)).toEqual(['US', 'CA'])
  const withCountries = await cli(
    'apps',
    'create',
    '--name',
    'Abroad',
    '--origin',
    'https://a.example',
    '--sms-countries',
    'GB',
    '--json',
  )
  expect(await countriesOf((JSON.parse(withCountries.out) as ServerAppConfig).id)).toEqual(['GB'])
})

test('behavior: --rpc-url sets an app node per chain, shows only the chain ids, drops with <id>=', async () => {
  const urlsOf = async (id: string) => (await storedApp(id))?.rpcUrls
  const created = await cli(
    'apps',
    'create',
    '--name',
    'Nodes',
    '--origin',
    'https://n.example',
    '--rpc-url',
    '1=https://eth.example/v2/secret-key',
    '--json',
  )
  expect(created.code).toBe(0)
  const { id } = JSON.parse(created.out) as ServerAppConfig
  expect(created.out).not.toContain('secret-key')
  expect(await urlsOf(id)).toEqual({ '1': 'https://eth.example/v2/secret-key' })
  const updated = await cli('apps', 'update', id, '--rpc-url', '10=http://127.0.0.1:8545')
  expect(updated.code).toBe(0)
  expect(updated.out).toMatch(/own rpc nodes +1, 10/)
  expect(updated.out).not.toContain('secret-key')
  expect(await cli('apps', 'update', id, '--rpc-url', '1=')).toMatchObject({ code: 0 })
  expect(await urlsOf(id)).toEqual({ '10': 'http://127.0.0.1:8545' })
  const unsupported = await cli('apps', 'update', id, '--rpc-url', '31337=http://x.example')
  expect(unsupported.code).toBe(1)
  expect(unsupported.err).toContain('rpcUrls 31337: Unsupported chainId')
  const malformed = await cli('apps', 'update', id, '--rpc-url', 'http://x.example')
  expect(malformed.code).not.toBe(0)
  expect(malformed.err).toContain('--rpc-url takes <chainId>=<url>')
})

test("behavior: a new app gets today's networks; --chains sets the app's chains on create and update, 'default' goes back to them, 'spec' names SPEC's list; an unknown one is refused", async () => {
  const plain = await cli(
    'apps',
    'create',
    '--name',
    'Today',
    '--origin',
    'https://t.example',
    '--json',
  )
  expect(plain.code).toBe(0)
  const today = [
    1, 10, 137, 42161, 8453, 42220, 314, 11155111, 84532, 11155420, 421614, 80002, 314159,
  ]
  expect((JSON.parse(plain.out) as ServerAppConfig).chains).toEqual(today)

  const created = await cli(
    'apps',
    'create',
    '--name',
    'On Base',
    '--origin',
    'https://b.example',
    '--chains',
    '8453, 84532',
    '--rpc-url',
    '8453=http://127.0.0.1:8545',
    '--json',
  )
  expect(created.code).toBe(0)
  const { id, chains } = JSON.parse(created.out) as ServerAppConfig
  expect(chains).toEqual([8453, 84532])
  const updated = await cli('apps', 'update', id, '--chains', '11155111,8453')
  expect(updated.code).toBe(0)
  expect(updated.out).toMatch(/chains +11155111, 8453/)
  const unknown = await cli('apps', 'update', id, '--chains', '8453,31337')
  expect(unknown.code).toBe(1)
  expect(unknown.err).toContain('Invalid app settings: chains.1 Unsupported chainId')
  const junk = await cli('apps', 'update', id, '--chains', 'base')
  expect(junk.code).not.toBe(0)
  expect(junk.err).toContain(
    "--chains takes chain ids such as 8453,84532, default or spec, not 'base'",
  )
  const spec = await cli('apps', 'update', id, '--chains', 'spec', '--json')
  expect(spec.code).toBe(0)
  expect((JSON.parse(spec.out) as ServerAppConfig).chains).toEqual([
    1, 5, 10, 420, 137, 80001, 42161, 421613, 42220, 44787, 314, 314159, 84531,
  ])
  const back = await cli('apps', 'update', id, '--chains', 'default', '--json')
  expect(back.code).toBe(0)
  expect((JSON.parse(back.out) as ServerAppConfig).chains).toEqual(today)
})
