/**
 * Test support: one oauth2-mock-server standing in for all five providers. Each provider's
 * endpoints point at it with a `p=<provider>` query marker, so its hooks answer in that
 * provider's shape (Twitter's `{data}`, Discord's user, GitHub's /user and /user/emails,
 * Apple's ID token). The OIDC providers (Google, Apple) get only the issuer: their JWKS is
 * found by discovery, as a self-hoster pointing them elsewhere would have it.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { OAUTH_PROVIDERS, type OAuthProvider } from '@latch/shared'
import {
  type MutableResponse,
  type MutableToken,
  OAuth2Issuer,
  OAuth2Service,
  type TokenRequestIncomingMessage,
} from 'oauth2-mock-server'
import { PROVIDERS } from '../oauth/providers.ts'
import type { OAuthSettings, ProviderSettings } from '../oauth/settings.ts'

/** Who signs in at the provider next. */
export interface MockPerson {
  sub: string
  email?: string | null
  name?: string | null
  username?: string | null
}

/** What the token endpoint last received, per provider (to check client authentication). */
export interface TokenRequestSeen {
  authorization: string | undefined
  body: Record<string, unknown>
}

export interface MockProviders {
  /** http://localhost:<port>, also the issuer of the ID tokens. */
  url: string
  /** Sets who the provider says is signing in. */
  signIn(provider: OAuthProvider, person: MockPerson): void
  /** Settings of an app whose five providers all point here. */
  settings(): OAuthSettings
  providerSettings(provider: OAuthProvider): ProviderSettings
  lastTokenRequest(provider: OAuthProvider): TokenRequestSeen | undefined
  /** The oauth2-mock-server service, for one-off hooks (beforeResponse, beforeUserinfo...). */
  service: OAuth2Service
  issuer: OAuth2Issuer
  stop(): Promise<void>
}

function providerOf(req: IncomingMessage, base: string): OAuthProvider | undefined {
  const p = new URL(req.url ?? '/', base).searchParams.get('p')
  return OAUTH_PROVIDERS.find((x) => x === p)
}

function userinfoBody(provider: OAuthProvider, person: MockPerson): Record<string, unknown> {
  switch (provider) {
    case 'google':
      return { sub: person.sub, email: person.email, email_verified: true, name: person.name }
    case 'twitter':
      return { data: { id: person.sub, username: person.username, name: person.name } }
    case 'discord':
      return { id: person.sub, username: person.username, email: person.email, verified: true }
    case 'github':
      return { id: Number(person.sub), login: person.username, name: person.name }
    case 'apple':
      return {}
  }
}

function githubEmails(person: MockPerson): Record<string, unknown>[] {
  return [
    // A verified address listed first that is not the primary one.
    { email: `secondary-${person.sub}@example.com`, primary: false, verified: true },
    ...(person.email ? [{ email: person.email, primary: true, verified: true }] : []),
  ]
}

/** Starts the stand-in on 127.0.0.1, a port of the system's choosing. */
export async function startMockProviders(): Promise<MockProviders> {
  const issuer = new OAuth2Issuer()
  await issuer.keys.generate('RS256')
  const service = new OAuth2Service(issuer)
  const people = new Map<OAuthProvider, MockPerson>()
  const seen = new Map<OAuthProvider, TokenRequestSeen>()
  const person = (p: OAuthProvider) => people.get(p) ?? { sub: `${p}-default` }
  let url = ''

  // GitHub's /user/emails sits beside its userinfo; the mock has no such route, so it is
  // answered here and everything else goes to oauth2-mock-server.
  const http: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    if (path === '/userinfo/emails') {
      const p = providerOf(req, url)
      if (!req.headers.authorization?.startsWith('Bearer ') || !p) {
        res.writeHead(401).end()
        return
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(githubEmails(person(p))))
      return
    }
    service.requestHandler(req, res)
  })
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(0, '127.0.0.1', resolve)
  })
  url = `http://localhost:${(http.address() as AddressInfo).port}`
  issuer.url = url

  service.on('beforeTokenSigning', (token: MutableToken, req: TokenRequestIncomingMessage) => {
    const p = providerOf(req, url)
    if (!p) return
    const who = person(p)
    token.payload.sub = who.sub
    if (p === 'apple' && who.email) {
      token.payload.email = who.email
      token.payload.email_verified = 'true'
    }
  })
  service.on('beforeResponse', (res: MutableResponse, req: TokenRequestIncomingMessage) => {
    const p = providerOf(req, url)
    if (!p) return
    seen.set(p, { authorization: req.headers.authorization, body: { ...req.body } })
    // Only the OIDC providers answer with an ID token.
    if (!PROVIDERS[p].oidc && res.body !== '') delete res.body.id_token
  })
  service.on('beforeUserinfo', (res: MutableResponse, req: IncomingMessage) => {
    const p = providerOf(req, url)
    if (p) res.body = userinfoBody(p, person(p))
  })

  const providerSettings = (p: OAuthProvider): ProviderSettings => ({
    clientId: `${p}-client`,
    clientSecret: `${p}-secret`,
    endpoints: {
      authorizationUrl: `${url}/authorize?p=${p}`,
      tokenUrl: `${url}/token?p=${p}`,
      ...(p === 'apple' ? {} : { userInfoUrl: `${url}/userinfo?p=${p}` }),
      ...(PROVIDERS[p].oidc ? { issuer: url } : {}),
    },
  })

  return {
    url,
    service,
    issuer,
    signIn: (p, who) => people.set(p, who),
    providerSettings,
    settings: () => Object.fromEntries(OAUTH_PROVIDERS.map((p) => [p, providerSettings(p)])),
    lastTokenRequest: (p) => seen.get(p),
    stop: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve())
        http.closeAllConnections()
      }),
  }
}

/** Follows an authorization URL as a browser would; answers the callback URL it redirects to. */
export async function authorizeAtMock(authorizationUrl: string): Promise<URL> {
  const res = await fetch(authorizationUrl, {
    redirect: 'manual',
    signal: AbortSignal.timeout(5000),
  })
  const location = res.headers.get('location')
  if (res.status !== 302 || !location) {
    throw new Error(`Expected a redirect from the provider, got HTTP ${res.status}`)
  }
  return new URL(location)
}
