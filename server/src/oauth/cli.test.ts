import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { applyOAuthFlags } from './cli.ts'

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
