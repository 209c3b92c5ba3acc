import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { OAUTH_PROVIDERS, OAUTH_RETURN_PARAM_NAMES, type OAuthProvider } from '@latch/shared'
import { exportPKCS8, generateKeyPair, jwtVerify } from 'jose'
import { type MutableToken, OAuth2Issuer } from 'oauth2-mock-server'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createSecrets } from '../crypto.ts'
import { type Db, openDatabase } from '../db/index.ts'
import { migratedMemory } from '../testing/global-setup.ts'
import {
  authorizeAtMock,
  type MockProviders,
  startMockProviders,
} from '../testing/mock-providers.ts'
import {
  browserHashOf,
  callbackRedirect,
  finishOAuth,
  type OAuthApp,
  type OAuthFlowDeps,
  startOAuth,
} from './flow.ts'
import { kyselyStateStore } from './state-store.ts'

const HOST = 'http://localhost:5173'
/** The starting browser's secret and its hash, as the modal makes them. */
const SECRET = 'b'.repeat(43)
const BROWSER_HASH = browserHashOf(SECRET)
const CALLBACK = 'http://127.0.0.1:8787/api/v1/oauth/callback'

let mock: MockProviders
let db: Db
let closeDb: (() => Promise<void>) | undefined
let deps: OAuthFlowDeps
let app: OAuthApp
let clock = Date.now()

beforeAll(async () => {
  mock = await startMockProviders()
  const database = await openDatabase({ databaseUrl: 'memory://', dataDir: null }, migratedMemory())
  closeDb = database.close
  db = database.db
  const secrets = createSecrets('oauth-flow-test-secret-0123456789abcdef')
  deps = {
    store: kyselyStateStore({ db, secrets, log: () => {} }, () => new Date(clock)),
    now: () => new Date(clock),
  }
  app = {
    id: 'app-under-test-0000000001',
    allowedOrigins: [HOST],
    loginMethods: ['email', ...OAUTH_PROVIDERS],
    settings: mock.settings(),
  }
})

afterAll(async () => {
  await mock?.stop()
  await closeDb?.()
})

/** Walks a flow to the host page's return URL; answers the latch_oauth_* parameters. */
async function walk(provider: OAuthProvider, userId: string | null = null) {
  const url = await startOAuth(deps, {
    app,
    provider,
    redirectTo: `${HOST}/page?x=1`,
    redirectUri: `${CALLBACK}/${provider}`,
    userId,
    browserHash: BROWSER_HASH,
  })
  const callback = await authorizeAtMock(url)
  const back = new URL(await callbackRedirect(deps, provider, callback.searchParams))
  return {
    url: new URL(url),
    back,
    code: back.searchParams.get(OAUTH_RETURN_PARAM_NAMES.code) ?? '',
    state: back.searchParams.get(OAUTH_RETURN_PARAM_NAMES.state) ?? '',
  }
}

describe('startOAuth', () => {
  test('behavior: the authorization URL carries state, PKCE S256 and, for OIDC, a nonce', async () => {
    const google = new URL(
      await startOAuth(deps, {
        app,
        provider: 'google',
        redirectTo: HOST,
        redirectUri: `${CALLBACK}/google`,
        userId: null,
        browserHash: BROWSER_HASH,
      }),
    )
    const q = google.searchParams
    expect(q.get('client_id')).toBe('google-client')
    expect(q.get('redirect_uri')).toBe(`${CALLBACK}/google`)
    expect(q.get('response_type')).toBe('code')
    expect(q.get('scope')).toBe('openid email profile')
    // 128 random bits or more, base64url.
    expect(q.get('state')).toMatch(/^[\w-]{22,}$/)
    expect(q.get('code_challenge_method')).toBe('S256')
    expect(q.get('code_challenge')).toMatch(/^[\w-]{43}$/)
    expect(q.get('nonce')).toMatch(/^[\w-]{22,}$/)

    const github = new URL(
      await startOAuth(deps, {
        app,
        provider: 'github',
        redirectTo: HOST,
        redirectUri: `${CALLBACK}/github`,
        userId: null,
        browserHash: BROWSER_HASH,
      }),
    )
    expect(github.searchParams.get('nonce')).toBeNull()
    expect(github.searchParams.get('code_challenge_method')).toBe('S256')

    const apple = new URL(
      await startOAuth(deps, {
        app,
        provider: 'apple',
        redirectTo: HOST,
        redirectUri: `${CALLBACK}/apple`,
        userId: null,
        browserHash: BROWSER_HASH,
      }),
    )
    expect(apple.searchParams.get('response_mode')).toBe('form_post')
    expect(apple.searchParams.get('nonce')).toBeTruthy()
  })

  test('error: redirect_to outside the allowed origins', async () => {
    for (const redirectTo of [
      'http://evil.example',
      'http://localhost:5174/',
      'javascript:alert(1)',
    ]) {
      await expect(
        startOAuth(deps, {
          app,
          provider: 'google',
          redirectTo,
          redirectUri: `${CALLBACK}/google`,
          userId: null,
          browserHash: BROWSER_HASH,
        }),
      ).rejects.toMatchObject({ code: 'origin_not_allowed' })
    }
  })

  test('error: a provider the app has not enabled or configured', async () => {
    const off = { ...app, loginMethods: ['email'] }
    await expect(
      startOAuth(deps, {
        app: off,
        provider: 'google',
        redirectTo: HOST,
        redirectUri: CALLBACK,
        userId: null,
        browserHash: BROWSER_HASH,
      }),
    ).rejects.toMatchObject({ code: 'method_not_available' })
    const unconfigured = { ...app, settings: {} }
    await expect(
      startOAuth(deps, {
        app: unconfigured,
        provider: 'google',
        redirectTo: HOST,
        redirectUri: CALLBACK,
        userId: null,
        browserHash: BROWSER_HASH,
      }),
    ).rejects.toMatchObject({ code: 'method_not_available' })
  })
})

describe('full flow against the stand-in provider', () => {
  const people = {
    google: { sub: 'g-1', email: 'ada@gmail.example', name: 'Ada Lovelace' },
    twitter: { sub: 't-1', username: 'ada', name: 'Ada L' },
    discord: { sub: 'd-1', username: 'ada#1', email: 'ada@discord.example' },
    github: { sub: '4242', username: 'ada-gh', name: 'Ada GH', email: 'ada@github.example' },
    apple: { sub: 'a-1', email: 'ada@privaterelay.appleid.com' },
  } as const
  const expected = {
    google: {
      type: 'google_oauth',
      subject: 'g-1',
      email: 'ada@gmail.example',
      name: 'Ada Lovelace',
    },
    twitter: { type: 'twitter_oauth', subject: 't-1', username: 'ada', name: 'Ada L' },
    discord: {
      type: 'discord_oauth',
      subject: 'd-1',
      username: 'ada#1',
      email: 'ada@discord.example',
    },
    github: {
      type: 'github_oauth',
      subject: '4242',
      username: 'ada-gh',
      name: 'Ada GH',
      email: 'ada@github.example',
    },
    apple: { type: 'apple_oauth', subject: 'a-1', email: 'ada@privaterelay.appleid.com' },
  }

  test.each(OAUTH_PROVIDERS)(
    'behavior: %s maps the profile to the SPEC fields',
    async (provider) => {
      mock.signIn(provider, people[provider])
      const { back, code, state } = await walk(provider)
      expect(back.origin + back.pathname).toBe(`${HOST}/page`)
      expect(back.searchParams.get('x')).toBe('1')
      expect(back.searchParams.get(OAUTH_RETURN_PARAM_NAMES.provider)).toBe(provider)
      const { account, record } = await finishOAuth(deps, {
        app,
        code,
        state,
        userId: null,
        browserSecret: SECRET,
      })
      expect(account).toEqual(expected[provider])
      expect(record.isLink).toBe(false)
    },
  )

  test('behavior: a flow started by a signed-in user is a link', async () => {
    const { code, state } = await walk('google', 'user-1')
    const { record } = await finishOAuth(deps, {
      app,
      code,
      state,
      userId: 'user-1',
      browserSecret: SECRET,
    })
    expect(record).toMatchObject({ isLink: true, userId: 'user-1', browserHash: BROWSER_HASH })
  })

  test('error: a link flow cannot be finished by another user', async () => {
    const { code, state } = await walk('google', 'user-1')
    await expect(
      finishOAuth(deps, { app, code, state, userId: 'user-2', browserSecret: SECRET }),
    ).rejects.toMatchObject({
      code: 'oauth_invalid_code',
      message: 'Invalid code during oauth flow.',
    })
  })

  test('error: a flow finished without the starting browser secret is refused', async () => {
    for (const browserSecret of ['', 'c'.repeat(43), `${SECRET}x`]) {
      const { code, state } = await walk('google')
      await expect(
        finishOAuth(deps, { app, code, state, userId: null, browserSecret }),
      ).rejects.toMatchObject({
        code: 'oauth_invalid_code',
        details: 'This OAuth flow was started in another browser',
      })
    }
  })

  test('error: a flow started signed out cannot be finished as a link', async () => {
    const { code, state } = await walk('google')
    await expect(
      finishOAuth(deps, { app, code, state, userId: 'victim', browserSecret: SECRET }),
    ).rejects.toMatchObject({
      code: 'oauth_invalid_code',
      details: 'This OAuth flow signs in: finish it with /oauth/authenticate',
    })
  })

  test('error: a link flow cannot be finished as a sign-in', async () => {
    const { code, state } = await walk('google', 'user-1')
    await expect(
      finishOAuth(deps, { app, code, state, userId: null, browserSecret: SECRET }),
    ).rejects.toMatchObject({
      code: 'oauth_invalid_code',
      details: 'This OAuth flow links an account: finish it with /oauth/link',
    })
  })

  test('error: a flow stored before browser binding cannot be finished', async () => {
    const state = 'state-from-before-the-binding'
    await deps.store.put(state, {
      appId: app.id,
      provider: 'github',
      redirectTo: HOST,
      redirectUri: `${CALLBACK}/github`,
      codeVerifier: 'v'.repeat(43),
      nonce: null,
      userId: null,
      isLink: false,
      browserHash: null,
      expiresAt: new Date(clock + 60_000),
    })
    await expect(
      finishOAuth(deps, { app, code: 'c', state, userId: null, browserSecret: SECRET }),
    ).rejects.toMatchObject({ code: 'oauth_invalid_code' })
  })

  test('error: a refused finish uses the state up (a state is tried once)', async () => {
    const { code, state } = await walk('google')
    await expect(
      finishOAuth(deps, { app, code, state, userId: null, browserSecret: 'w'.repeat(43) }),
    ).rejects.toMatchObject({ code: 'oauth_invalid_code' })
    await expect(
      finishOAuth(deps, { app, code, state, userId: null, browserSecret: SECRET }),
    ).rejects.toMatchObject({ code: 'oauth_invalid_code', details: undefined })
  })

  test('error: a reused state is refused', async () => {
    const { code, state } = await walk('google')
    await finishOAuth(deps, { app, code, state, userId: null, browserSecret: SECRET })
    await expect(
      finishOAuth(deps, { app, code, state, userId: null, browserSecret: SECRET }),
    ).rejects.toMatchObject({
      code: 'oauth_invalid_code',
    })
  })

  test('error: an expired state is refused', async () => {
    const { code, state } = await walk('google')
    clock += 10 * 60 * 1000 + 1
    try {
      await expect(
        finishOAuth(deps, { app, code, state, userId: null, browserSecret: SECRET }),
      ).rejects.toMatchObject({
        code: 'oauth_invalid_code',
      })
    } finally {
      clock = Date.now()
    }
  })

  test('error: a state of another app is refused', async () => {
    const { code, state } = await walk('google')
    const other = { ...app, id: 'another-app-0000000000001' }
    await expect(
      finishOAuth(deps, { app: other, code, state, userId: null, browserSecret: SECRET }),
    ).rejects.toMatchObject({
      code: 'oauth_invalid_code',
    })
  })

  test('error: an unknown state is refused', async () => {
    await expect(
      finishOAuth(deps, {
        app,
        code: 'abc',
        state: 'no-such-state',
        userId: null,
        browserSecret: SECRET,
      }),
    ).rejects.toMatchObject({ code: 'oauth_invalid_code' })
  })

  test('error: an invalid code', async () => {
    const { state } = await walk('google')
    await expect(
      finishOAuth(deps, { app, code: 'not-the-code', state, userId: null, browserSecret: SECRET }),
    ).rejects.toMatchObject({ code: 'oauth_invalid_code', retryable: true })
  })

  test('error: a token endpoint answering 200 with an error body', async () => {
    for (const provider of ['github', 'google'] as const) {
      const { code, state } = await walk(provider)
      mock.service.once('beforeResponse', (res) => {
        res.statusCode = 200
        res.body = { error: 'bad_verification_code', error_description: 'The code is wrong.' }
      })
      await expect(
        finishOAuth(deps, { app, code, state, userId: null, browserSecret: SECRET }),
      ).rejects.toMatchObject({
        code: 'oauth_invalid_code',
      })
    }
  })

  test('error: an ID token with the wrong nonce', async () => {
    const { code, state } = await walk('google')
    // Only the ID token carries an audience (the client id).
    const tamper = (token: MutableToken) => {
      if (!token.payload.aud) return
      token.payload.nonce = 'someone-elses-nonce'
      mock.service.off('beforeTokenSigning', tamper)
    }
    mock.service.on('beforeTokenSigning', tamper)
    await expect(
      finishOAuth(deps, { app, code, state, userId: null, browserSecret: SECRET }),
    ).rejects.toMatchObject({
      code: 'oauth_invalid_code',
    })
  })

  test('error: an ID token signed by a key outside the provider JWKS', async () => {
    const { code, state, url } = await walk('apple')
    const nonce = url.searchParams.get('nonce')
    const rogue = new OAuth2Issuer()
    await rogue.keys.generate('RS256')
    rogue.url = mock.url
    const forged = await rogue.buildToken({
      scopesOrTransform: (_h, p) => Object.assign(p, { sub: 'victim', aud: 'apple-client', nonce }),
    })
    mock.service.once('beforeResponse', (res) => {
      if (res.body !== '') res.body.id_token = forged
    })
    await expect(
      finishOAuth(deps, { app, code, state, userId: null, browserSecret: SECRET }),
    ).rejects.toMatchObject({
      code: 'oauth_invalid_code',
    })
  })

  test('error: userinfo of another subject than the ID token', async () => {
    mock.signIn('google', { sub: 'g-1', email: 'a@b.example', name: 'A' })
    const { code, state } = await walk('google')
    mock.service.once('beforeUserinfo', (res) => {
      res.body = { sub: 'g-2', email: 'x@y.example' }
    })
    // Registered after the helper's own listener, so this answer wins.
    await expect(
      finishOAuth(deps, { app, code, state, userId: null, browserSecret: SECRET }),
    ).rejects.toMatchObject({
      code: 'oauth_invalid_code',
    })
  })
})

describe('talking to the provider', () => {
  test('behavior: client authentication per provider (Basic for Twitter, form body for Google)', async () => {
    for (const provider of ['twitter', 'google'] as const) {
      const { code, state } = await walk(provider)
      await finishOAuth(deps, { app, code, state, userId: null, browserSecret: SECRET })
    }
    const twitter = mock.lastTokenRequest('twitter')
    // RFC 6749 section 2.3.1: both parts form-encoded, then Basic.
    const basic = /^Basic (.+)$/.exec(twitter?.authorization ?? '')?.[1] ?? ''
    const [id, secret] = Buffer.from(basic, 'base64').toString().split(':').map(decodeURIComponent)
    expect([id, secret]).toEqual(['twitter-client', 'twitter-secret'])
    expect(twitter?.body.client_secret).toBeUndefined()
    expect(twitter?.body.code_verifier).toMatch(/^[\w-]{43,128}$/)
    const google = mock.lastTokenRequest('google')
    expect(google?.authorization).toBeUndefined()
    expect(google?.body).toMatchObject({
      client_id: 'google-client',
      client_secret: 'google-secret',
    })
  })

  test('behavior: a public client (no secret) relies on PKCE alone', async () => {
    const publicApp: OAuthApp = {
      ...app,
      settings: {
        ...app.settings,
        discord: { ...mock.providerSettings('discord'), clientSecret: '' },
      },
    }
    mock.signIn('discord', { sub: 'd-public', username: 'pub' })
    const url = await startOAuth(deps, {
      app: publicApp,
      provider: 'discord',
      redirectTo: HOST,
      redirectUri: `${CALLBACK}/discord`,
      userId: null,
      browserHash: BROWSER_HASH,
    })
    const callback = await authorizeAtMock(url)
    const { account } = await finishOAuth(deps, {
      app: publicApp,
      code: callback.searchParams.get('code') ?? '',
      state: callback.searchParams.get('state') ?? '',
      userId: null,
      browserSecret: SECRET,
    })
    expect(account).toMatchObject({ subject: 'd-public' })
    const sent = mock.lastTokenRequest('discord')
    expect(sent?.authorization).toBeUndefined()
    expect(sent?.body.client_secret).toBeUndefined()
    expect(sent?.body.client_id).toBe('discord-client')
  })

  test('error: a profile endpoint failing', async () => {
    const { code, state } = await walk('discord')
    mock.service.once('beforeUserinfo', (res) => {
      res.statusCode = 500
      res.body = { message: 'down' }
    })
    await expect(
      finishOAuth(deps, { app, code, state, userId: null, browserSecret: SECRET }),
    ).rejects.toMatchObject({
      code: 'oauth_invalid_code',
    })
  })

  test('error: a provider that never answers is given up on', async () => {
    const silent = createServer(() => {})
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const port = (silent.address() as AddressInfo).port
    const hanging: OAuthApp = {
      ...app,
      settings: {
        ...app.settings,
        github: {
          ...mock.providerSettings('github'),
          endpoints: {
            ...mock.providerSettings('github').endpoints,
            tokenUrl: `http://127.0.0.1:${port}/token`,
          },
        },
      },
    }
    try {
      const url = await startOAuth(deps, {
        app: hanging,
        provider: 'github',
        redirectTo: HOST,
        redirectUri: `${CALLBACK}/github`,
        userId: null,
        browserHash: BROWSER_HASH,
      })
      const callback = await authorizeAtMock(url)
      const started = Date.now()
      await expect(
        finishOAuth(
          { ...deps, timeoutMs: 300 },
          {
            app: hanging,
            code: callback.searchParams.get('code') ?? '',
            state: callback.searchParams.get('state') ?? '',
            userId: null,
            browserSecret: SECRET,
          },
        ),
      ).rejects.toMatchObject({ code: 'oauth_invalid_code' })
      expect(Date.now() - started).toBeLessThan(5000)
    } finally {
      silent.closeAllConnections()
      await new Promise((resolve) => silent.close(resolve))
    }
  })
})

describe('Apple client authentication', () => {
  test('behavior: with a team key, the token request carries an ES256 client secret', async () => {
    const pair = await generateKeyPair('ES256', { extractable: true })
    const appleApp: OAuthApp = {
      ...app,
      settings: {
        ...app.settings,
        apple: {
          ...mock.providerSettings('apple'),
          clientSecret: undefined,
          appleTeamId: 'TEAMID1234',
          appleKeyId: 'KEYID12345',
          applePrivateKey: await exportPKCS8(pair.privateKey),
        },
      },
    }
    mock.signIn('apple', { sub: 'a-team', email: 'team@privaterelay.appleid.com' })
    const url = await startOAuth(deps, {
      app: appleApp,
      provider: 'apple',
      redirectTo: HOST,
      redirectUri: `${CALLBACK}/apple`,
      userId: null,
      browserHash: BROWSER_HASH,
    })
    const callback = await authorizeAtMock(url)
    const { account } = await finishOAuth(deps, {
      app: appleApp,
      code: callback.searchParams.get('code') ?? '',
      state: callback.searchParams.get('state') ?? '',
      userId: null,
      browserSecret: SECRET,
    })
    expect(account).toEqual({
      type: 'apple_oauth',
      subject: 'a-team',
      email: 'team@privaterelay.appleid.com',
    })
    const sent = mock.lastTokenRequest('apple')?.body
    expect(sent?.client_id).toBe('apple-client')
    const { payload, protectedHeader } = await jwtVerify(
      String(sent?.client_secret),
      pair.publicKey,
      {
        issuer: 'TEAMID1234',
        subject: 'apple-client',
        audience: 'https://appleid.apple.com',
      },
    )
    expect(protectedHeader.kid).toBe('KEYID12345')
    expect(payload.exp).toBeDefined()
  })
})

describe('the provider callback', () => {
  test("behavior: a denial returns the code 'undefined', which finishes as oauth_user_denied", async () => {
    const url = await startOAuth(deps, {
      app,
      provider: 'discord',
      redirectTo: HOST,
      redirectUri: `${CALLBACK}/discord`,
      userId: null,
      browserHash: BROWSER_HASH,
    })
    const state = new URL(url).searchParams.get('state') ?? ''
    const back = new URL(
      await callbackRedirect(
        deps,
        'discord',
        new URLSearchParams({ error: 'access_denied', state }),
      ),
    )
    expect(back.searchParams.get(OAUTH_RETURN_PARAM_NAMES.code)).toBe('undefined')
    await expect(
      finishOAuth(deps, { app, code: 'undefined', state, userId: null, browserSecret: SECRET }),
    ).rejects.toMatchObject({
      code: 'oauth_user_denied',
      message: 'User denied confirmation during OAuth flow',
    })
    // The denied state is used up.
    await expect(
      finishOAuth(deps, { app, code: 'x', state, userId: null, browserSecret: SECRET }),
    ).rejects.toMatchObject({
      code: 'oauth_invalid_code',
    })
  })

  test('behavior: another provider error finishes as oauth_invalid_code', async () => {
    const url = await startOAuth(deps, {
      app,
      provider: 'github',
      redirectTo: HOST,
      redirectUri: `${CALLBACK}/github`,
      userId: null,
      browserHash: BROWSER_HASH,
    })
    const state = new URL(url).searchParams.get('state') ?? ''
    const back = new URL(
      await callbackRedirect(deps, 'github', new URLSearchParams({ error: 'server_error', state })),
    )
    const code = back.searchParams.get(OAUTH_RETURN_PARAM_NAMES.code) ?? ''
    await expect(
      finishOAuth(deps, { app, code, state, userId: null, browserSecret: SECRET }),
    ).rejects.toMatchObject({
      code: 'oauth_invalid_code',
    })
  })

  test('error: an unknown state or another provider than the one started', async () => {
    await expect(
      callbackRedirect(deps, 'google', new URLSearchParams({ code: 'c', state: 'nope' })),
    ).rejects.toMatchObject({ code: 'oauth_invalid_code' })
    const url = await startOAuth(deps, {
      app,
      provider: 'google',
      redirectTo: HOST,
      redirectUri: `${CALLBACK}/google`,
      userId: null,
      browserHash: BROWSER_HASH,
    })
    const state = new URL(url).searchParams.get('state') ?? ''
    await expect(
      callbackRedirect(deps, 'twitter', new URLSearchParams({ code: 'c', state })),
    ).rejects.toMatchObject({ code: 'oauth_invalid_code' })
  })
})
