import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { applyOAuthFlags, type OAuthFlag, type SecretSources, splitOAuthFlags } from './cli.ts'
import type { OAuthSettings } from './settings.ts'

/** Split, then apply over `current`: what the CLI does with its arguments. */
function flagsOver(current: OAuthSettings, args: readonly string[], sources?: SecretSources) {
  const { flags, rest } = splitOAuthFlags(args, sources)
  return { oauth: applyOAuthFlags(current, flags, sources), rest }
}

describe('splitOAuthFlags and applyOAuthFlags', () => {
  test('behavior: splitting only reads the values: a partial update splits without a client id, standard input is read once, and applying over the current settings keeps them', () => {
    let reads = 0
    const sources: SecretSources = {
      stdin: () => {
        reads++
        return 'from-stdin\n'
      },
      env: {},
    }
    const { flags, rest } = splitOAuthFlags(
      ['app1', '--apple-token-url', 'http://127.0.0.1:9/token', '--google-client-secret', '-'],
      sources,
    )
    expect(rest).toEqual(['app1'])
    expect(flags).toEqual<OAuthFlag[]>([
      { provider: 'apple', name: 'apple-token-url', value: 'http://127.0.0.1:9/token' },
      { provider: 'google', name: 'google-client-secret', value: 'from-stdin' },
    ])
    const current: OAuthSettings = { apple: { clientId: 'a' }, google: { clientId: 'g' } }
    expect(applyOAuthFlags(current, flags, sources)).toEqual({
      apple: { clientId: 'a', endpoints: { tokenUrl: 'http://127.0.0.1:9/token' } },
      google: { clientId: 'g', clientSecret: 'from-stdin' },
    })
    expect(reads).toBe(1)
  })

  test('behavior: takes the OAuth flags out and leaves the rest in order', () => {
    const { oauth, rest } = flagsOver({}, [
      'app123',
      '--google-client-id',
      'gid',
      '--name',
      'Demo',
      '--google-client-secret=gsecret',
      '--github-client-id',
      'ghid',
      '--github-token-url',
      'http://127.0.0.1:9/token',
      '--json',
    ])
    expect(rest).toEqual(['app123', '--name', 'Demo', '--json'])
    expect(oauth).toEqual({
      google: { clientId: 'gid', clientSecret: 'gsecret' },
      github: { clientId: 'ghid', endpoints: { tokenUrl: 'http://127.0.0.1:9/token' } },
    })
  })

  test('behavior: merges over the current settings of a provider', () => {
    const { oauth } = flagsOver(
      { discord: { clientId: 'old', clientSecret: 's', endpoints: { issuer: 'x' } } },
      ['--discord-client-id', 'new'],
    )
    expect(oauth.discord).toEqual({
      clientId: 'new',
      clientSecret: 's',
      endpoints: { issuer: 'x' },
    })
  })

  test('param: the Apple team key is read from its .p8 file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'latch-p8-'))
    const file = join(dir, 'AuthKey_KEY.p8')
    writeFileSync(file, '-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n')
    const { oauth } = flagsOver({}, [
      '--apple-client-id=com.example.web',
      '--apple-team-id',
      'TEAM',
      '--apple-key-id',
      'KEY',
      '--apple-private-key-file',
      file,
    ])
    expect(oauth.apple).toEqual({
      clientId: 'com.example.web',
      appleTeamId: 'TEAM',
      appleKeyId: 'KEY',
      applePrivateKey: '-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----',
    })
  })

  test('error: clear messages for a missing value, a missing client id, a bad URL, a missing file', () => {
    expect(() => flagsOver({}, ['--google-client-id'])).toThrow('--google-client-id needs a value')
    expect(() => flagsOver({}, ['--twitter-client-secret', 's'])).toThrow(
      'Invalid twitter OAuth settings: --twitter-client-id is required',
    )
    expect(() => flagsOver({}, ['--google-client-id=a', '--google-token-url=nope'])).toThrow(
      /Invalid google OAuth settings: endpoints.tokenUrl/,
    )
    expect(() =>
      flagsOver({}, ['--apple-client-id=a', '--apple-private-key-file=/no/such.p8']),
    ).toThrow("Cannot read the Apple private key file '/no/such.p8'")
  })

  test('behavior: flags of no provider are left alone', () => {
    expect(flagsOver({}, ['--google-colour', 'red', '--twitter-team-id=x']).rest).toEqual([
      '--google-colour',
      'red',
      '--twitter-team-id=x',
    ])
  })
})

describe('client secrets kept out of the arguments', () => {
  const sources = (stdin: string, env: Record<string, string> = {}): SecretSources => ({
    stdin: () => stdin,
    env,
  })

  test('behavior: from a file, without its final newline', () => {
    const dir = mkdtempSync(join(tmpdir(), 'latch-secret-'))
    const file = join(dir, 'google-secret')
    writeFileSync(file, 'from-the-file\n')
    const { oauth } = flagsOver({}, ['--google-client-id=gid', '--google-client-secret-file', file])
    expect(oauth.google).toEqual({ clientId: 'gid', clientSecret: 'from-the-file' })
  })

  test('behavior: from an environment variable', () => {
    const { oauth } = flagsOver(
      {},
      ['--github-client-id=ghid', '--github-client-secret-env', 'GH_SECRET'],
      sources('', { GH_SECRET: 'from-the-env' }),
    )
    expect(oauth.github).toEqual({ clientId: 'ghid', clientSecret: 'from-the-env' })
  })

  test("behavior: '-' reads standard input; the argument form still works", () => {
    const { oauth } = flagsOver(
      {},
      [
        '--discord-client-id=did',
        '--discord-client-secret',
        '-',
        '--twitter-client-id=tid',
        '--twitter-client-secret=on-the-command-line',
      ],
      sources('from-stdin\n'),
    )
    expect(oauth.discord).toEqual({ clientId: 'did', clientSecret: 'from-stdin' })
    expect(oauth.twitter).toEqual({ clientId: 'tid', clientSecret: 'on-the-command-line' })
  })

  test("behavior: a real process's standard input", () => {
    const cli = fileURLToPath(new URL('./cli.ts', import.meta.url))
    const run = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `import { applyOAuthFlags, splitOAuthFlags } from ${JSON.stringify(cli)}
process.stdout.write(JSON.stringify(applyOAuthFlags({}, splitOAuthFlags(['--google-client-id=g', '--google-client-secret', '-']).flags)))`,
      ],
      { input: 'piped-secret\n', encoding: 'utf8', timeout: 30_000 },
    )
    expect(run.stderr).toBe('')
    expect(JSON.parse(run.stdout)).toEqual({
      google: { clientId: 'g', clientSecret: 'piped-secret' },
    })
  })

  test('error: clear messages for a missing file, an unset or empty variable, empty input, two readers of standard input', () => {
    const base = ['--google-client-id=g']
    expect(() =>
      flagsOver({}, [...base, '--google-client-secret-file', '/no/such/secret']),
    ).toThrow("Cannot read the client secret file '/no/such/secret'")
    expect(() => flagsOver({}, [...base, '--google-client-secret-env=NOPE'], sources(''))).toThrow(
      'The environment variable NOPE is not set',
    )
    expect(() =>
      flagsOver({}, [...base, '--google-client-secret-env=BLANK'], sources('', { BLANK: ' ' })),
    ).toThrow('The environment variable BLANK is empty')
    expect(() => flagsOver({}, [...base, '--google-client-secret', '-'], sources('\n'))).toThrow(
      'The client secret on standard input is empty',
    )
    expect(() =>
      flagsOver(
        {},
        [
          ...base,
          '--google-client-secret=-',
          '--github-client-id=h',
          '--github-client-secret',
          '-',
        ],
        sources('one'),
      ),
    ).toThrow('--google-client-secret already reads standard input')
  })
})
