import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { applyOAuthFlags, type SecretSources } from './cli.ts'

describe('applyOAuthFlags', () => {
  test('behavior: takes the OAuth flags out and leaves the rest in order', () => {
    const { oauth, rest } = applyOAuthFlags({}, [
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
    const { oauth } = applyOAuthFlags(
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
    const { oauth } = applyOAuthFlags({}, [
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
    expect(() => applyOAuthFlags({}, ['--google-client-id'])).toThrow(
      '--google-client-id needs a value',
    )
    expect(() => applyOAuthFlags({}, ['--twitter-client-secret', 's'])).toThrow(
      'Invalid twitter OAuth settings: --twitter-client-id is required',
    )
    expect(() => applyOAuthFlags({}, ['--google-client-id=a', '--google-token-url=nope'])).toThrow(
      /Invalid google OAuth settings: endpoints.tokenUrl/,
    )
    expect(() =>
      applyOAuthFlags({}, ['--apple-client-id=a', '--apple-private-key-file=/no/such.p8']),
    ).toThrow("Cannot read the Apple private key file '/no/such.p8'")
  })

  test('behavior: flags of no provider are left alone', () => {
    expect(applyOAuthFlags({}, ['--google-colour', 'red', '--twitter-team-id=x']).rest).toEqual([
      '--google-colour',
      'red',
      '--twitter-team-id=x',
    ])
  })
})

describe('client secrets kept out of the arguments (issue 8 part 5)', () => {
  const sources = (stdin: string, env: Record<string, string> = {}): SecretSources => ({
    stdin: () => stdin,
    env,
  })

  test('behavior: from a file, without its final newline', () => {
    const dir = mkdtempSync(join(tmpdir(), 'latch-secret-'))
    const file = join(dir, 'google-secret')
    writeFileSync(file, 'from-the-file\n')
    const { oauth } = applyOAuthFlags({}, [
      '--google-client-id=gid',
      '--google-client-secret-file',
      file,
    ])
    expect(oauth.google).toEqual({ clientId: 'gid', clientSecret: 'from-the-file' })
  })

  test('behavior: from an environment variable', () => {
    const { oauth } = applyOAuthFlags(
      {},
      ['--github-client-id=ghid', '--github-client-secret-env', 'GH_SECRET'],
      sources('', { GH_SECRET: 'from-the-env' }),
    )
    expect(oauth.github).toEqual({ clientId: 'ghid', clientSecret: 'from-the-env' })
  })

  test("behavior: '-' reads standard input; the argument form still works", () => {
    const { oauth } = applyOAuthFlags(
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
        `import { applyOAuthFlags } from ${JSON.stringify(cli)}
process.stdout.write(JSON.stringify(applyOAuthFlags({}, ['--google-client-id=g', '--google-client-secret', '-']).oauth))`,
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
      applyOAuthFlags({}, [...base, '--google-client-secret-file', '/no/such/secret']),
    ).toThrow("Cannot read the client secret file '/no/such/secret'")
    expect(() =>
      applyOAuthFlags({}, [...base, '--google-client-secret-env=NOPE'], sources('')),
    ).toThrow('The environment variable NOPE is not set')
    expect(() =>
      applyOAuthFlags(
        {},
        [...base, '--google-client-secret-env=BLANK'],
        sources('', { BLANK: ' ' }),
      ),
    ).toThrow('The environment variable BLANK is empty')
    expect(() =>
      applyOAuthFlags({}, [...base, '--google-client-secret', '-'], sources('\n')),
    ).toThrow('The client secret on standard input is empty')
    expect(() =>
      applyOAuthFlags(
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
