import { LatchError, OAUTH_PROVIDERS } from '@latch/shared'
import { describe, expect, test } from 'vitest'
import {
  endpointsFromEnv,
  PROVIDERS,
  providerOfAccountType,
  resolveEndpoints,
} from './providers.ts'

const none = { idToken: undefined, userinfo: undefined, emails: undefined }

describe('the provider table', () => {
  test('behavior: each provider maps to its SPEC account type, Google and Apple are OIDC', () => {
    expect(OAUTH_PROVIDERS.map((p) => PROVIDERS[p].accountType)).toEqual([
      'google_oauth',
      'twitter_oauth',
      'discord_oauth',
      'github_oauth',
      'apple_oauth',
    ])
    expect(OAUTH_PROVIDERS.filter((p) => PROVIDERS[p].oidc)).toEqual(['google', 'apple'])
    expect(OAUTH_PROVIDERS.filter((p) => PROVIDERS[p].pkce)).toEqual([
      'google',
      'twitter',
      'discord',
      'github',
    ])
    expect(providerOfAccountType('github_oauth')).toBe('github')
    expect(providerOfAccountType('email')).toBeUndefined()
  })

  test('behavior: only verified e-mail addresses are kept', () => {
    expect(
      PROVIDERS.google.profile({
        ...none,
        userinfo: { sub: '1', email: 'a@b.example', email_verified: false, name: 'A' },
      }),
    ).toEqual({ type: 'google_oauth', subject: '1', email: null, name: 'A' })
    expect(
      PROVIDERS.discord.profile({
        ...none,
        userinfo: { id: '9', username: 'u', email: 'a@b.example', verified: false },
      }),
    ).toEqual({ type: 'discord_oauth', subject: '9', username: 'u', email: null })
    expect(
      PROVIDERS.apple.profile({
        ...none,
        idToken: { sub: 's', email: 'a@b.example', email_verified: 'false' },
      }),
    ).toEqual({ type: 'apple_oauth', subject: 's', email: null })
  })

  test('behavior: GitHub takes the primary verified address, numeric ids become strings', () => {
    const userinfo = { id: 123, login: 'octo', name: null }
    expect(
      PROVIDERS.github.profile({
        ...none,
        userinfo,
        emails: [
          { email: 'x@b.example', primary: false, verified: true },
          { email: 'p@b.example', primary: true, verified: false },
        ],
      }),
    ).toEqual({ type: 'github_oauth', subject: '123', username: 'octo', name: null, email: null })
    expect(
      PROVIDERS.github.profile({
        ...none,
        userinfo,
        emails: [{ email: 'p@b.example', primary: true, verified: true }],
      }),
    ).toMatchObject({ email: 'p@b.example' })
  })

  test('error: a profile without a subject does not map', () => {
    expect(() => PROVIDERS.twitter.profile({ ...none, userinfo: { data: {} } })).toThrow()
    expect(() => PROVIDERS.google.profile({ ...none, userinfo: { email: 'a@b' } })).toThrow()
  })
})

describe('resolveEndpoints', () => {
  test('behavior: the real endpoints by default, over https', () => {
    const { endpoints, insecure, discoverJwks } = resolveEndpoints('github', undefined, {})
    expect(endpoints.token).toBe('https://github.com/login/oauth/access_token')
    expect(endpoints.emails).toBe('https://api.github.com/user/emails')
    expect(insecure).toBe(false)
    expect(discoverJwks).toBe(false)
  })

  test('param: environment overrides, then the app overrides', () => {
    const env = {
      LATCH_OAUTH_GOOGLE_TOKEN_URL: 'http://127.0.0.1:9/token',
      LATCH_OAUTH_GOOGLE_ISSUER: 'http://127.0.0.1:9',
      LATCH_OAUTH_TWITTER_TOKEN_URL: 'https://elsewhere.example/token',
    }
    expect(endpointsFromEnv('google', env)).toEqual({
      tokenUrl: 'http://127.0.0.1:9/token',
      issuer: 'http://127.0.0.1:9',
    })
    const r = resolveEndpoints(
      'google',
      { tokenUrl: 'http://localhost:7/t' },
      endpointsFromEnv('google', env),
    )
    expect(r.endpoints.token).toBe('http://localhost:7/t')
    expect(r.endpoints.issuer).toBe('http://127.0.0.1:9')
    expect(r.endpoints.authorization).toBe('https://accounts.google.com/o/oauth2/v2/auth')
    expect(r.insecure).toBe(true)
    // The issuer moved without a JWKS: found by discovery.
    expect(r.discoverJwks).toBe(true)
    expect(r.endpoints.jwks).toBeNull()
  })

  test('behavior: GitHub e-mails follow an overridden userinfo URL', () => {
    const r = resolveEndpoints('github', { userInfoUrl: 'https://gh.example/api/user?x=1' }, {})
    expect(r.endpoints.emails).toBe('https://gh.example/api/user/emails?x=1')
  })

  test('error: plain http anywhere but a loopback host', () => {
    const attempt = () => resolveEndpoints('discord', { tokenUrl: 'http://discord.example/t' }, {})
    expect(attempt).toThrow(LatchError)
    expect(attempt).toThrow('The discord token endpoint must use https')
  })
})
