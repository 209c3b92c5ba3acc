/**
 * Test support: one oauth2-mock-server standing in for all five providers. Each provider's
 * endpoints point at it with a `p=<provider>` query marker, so its hooks answer in that
 * provider's shape (Twitter's `{data}`, GitHub's /user and /user/emails, Apple's ID token).
 */

import type { IncomingMessage } from 'node:http'
import { OAUTH_PROVIDERS, type OAuthProvider } from '@latch/shared'
import {
  type MutableResponse,
  type MutableToken,
  OAuth2Server,
  type TokenRequestIncomingMessage,
} from 'oauth2-mock-server'
import { PROVIDERS } from './providers.ts'
import type { OAuthSettings, ProviderSettings } from './settings.ts'

/** Who signs in at the provider next. */
export interface MockPerson {
  sub: string
  email?: string | null
  name?: string | null
  username?: string | null
}

export interface MockProviders {
  /** http://localhost:<port> */
  url: string
  /** Sets who the provider says is signing in. */
  signIn(provider: OAuthProvider, person: MockPerson): void
  /** The settings of an app whose five providers all point here. */
  settings(): OAuthSettings
  /** Settings for one provider (endpoints included). */
  providerSettings(provider: OAuthProvider): ProviderSettings
  server: OAuth2Server
  stop(): Promise<void>
}

function providerOf(req: IncomingMessage, base: string): OAuthProvider | undefined {
  const p = new URL(req.url ?? '/', base).searchParams.get('p')
  return OAUTH_PROVIDERS.find((x) => x === p)
}

function userinfoBody(
  provider: OAuthProvider,
  person: MockPerson,
  emails: boolean,
): Record<string, unknown> | Record<string, unknown>[] {
  switch (provider) {
    case 'google':
      return { sub: person.sub, email: person.email, email_verified: true, name: person.name }
    case 'twitter':
      return { data: { id: person.sub, username: person.username, name: person.name } }
    case 'discord':
      return { id: person.sub, username: person.username, email: person.email, verified: true }
    case 'github':
      return emails
        ? [
            { email: `secondary-${person.sub}@example.com`, primary: false, verified: true },
            ...(person.email ? [{ email: person.email, primary: true, verified: true }] : []),
          ]
        : { id: Number(person.sub), login: person.username, name: person.name }
    case 'apple':
      return {}
  }
}

/** Starts the stand-in on 127.0.0.1, a port of the system's choosing. */
export async function startMockProviders(): Promise<MockProviders> {
  const server = new OAuth2Server()
  await server.issuer.keys.generate('RS256')
  await server.start(0, '127.0.0.1')
  const url = server.issuer.url
  if (!url) throw new Error('oauth2-mock-server did not report its URL')
  const people = new Map<OAuthProvider, MockPerson>()
  const person = (p: OAuthProvider) => people.get(p) ?? { sub: `${p}-default` }

  server.service.on(
    'beforeTokenSigning',
    (token: MutableToken, req: TokenRequestIncomingMessage) => {
      const p = providerOf(req, url)
      if (!p) return
      const who = person(p)
      token.payload.sub = who.sub
      if (p === 'apple' && who.email) {
        token.payload.email = who.email
        token.payload.email_verified = 'true'
      }
    },
  )
  server.service.on('beforeResponse', (res: MutableResponse, req: TokenRequestIncomingMessage) => {
    const p = providerOf(req, url)
    // Only the OIDC providers answer with an ID token.
    if (p && !PROVIDERS[p].oidc && res.body !== '') delete res.body.id_token
  })
  server.service.on('beforeUserinfo', (res: MutableResponse, req: IncomingMessage) => {
    const p = providerOf(req, url)
    if (!p) return
    const emails = new URL(req.url ?? '/', url).searchParams.has('emails')
    res.body = userinfoBody(p, person(p), emails) as Record<string, unknown>
  })

  const providerSettings = (p: OAuthProvider): ProviderSettings => {
    const oidc = PROVIDERS[p].oidc
    return {
      clientId: `${p}-client`,
      clientSecret: `${p}-secret`,
      endpoints: {
        authorization: `${url}/authorize?p=${p}`,
        token: `${url}/token?p=${p}`,
        ...(p === 'apple' ? {} : { userinfo: `${url}/userinfo?p=${p}` }),
        ...(p === 'github' ? { emails: `${url}/userinfo?p=${p}&emails=1` } : {}),
        ...(oidc ? { issuer: url, jwks: `${url}/jwks` } : {}),
      },
    }
  }

  return {
    url,
    server,
    signIn: (p, who) => people.set(p, who),
    providerSettings,
    settings: () => Object.fromEntries(OAUTH_PROVIDERS.map((p) => [p, providerSettings(p)])),
    stop: () => server.stop(),
  }
}

/** Follows the provider's authorization URL as a browser would: answers the callback URL it redirects to. */
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
