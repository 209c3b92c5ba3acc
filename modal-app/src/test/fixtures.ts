import {
  DEFAULT_CHAIN_IDS,
  type EmailAccount,
  type ServerAppConfig,
  type User,
} from '@latch/shared'

export const APP_ID = 'clx0000000000000000000001'

export function serverConfig(overrides: Partial<ServerAppConfig> = {}): ServerAppConfig {
  return {
    id: APP_ID,
    name: 'Acme',
    verificationKey: '',
    logoUrl: null,
    accentColor: null,
    theme: null,
    showWalletLoginFirst: true,
    allowlistEnabled: false,
    allowlistConfig: {
      errorTitle: null,
      errorDetail: null,
      errorCtaText: null,
      errorCtaLink: null,
    },
    emailAuth: true,
    smsAuth: false,
    walletAuth: true,
    googleOAuth: false,
    twitterOAuth: false,
    discordOAuth: false,
    githubOAuth: false,
    appleOAuth: false,
    passkeyAuth: false,
    termsAndConditionsUrl: null,
    privacyPolicyUrl: null,
    embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: false },
    customApiUrl: null,
    walletConnectCloudProjectId: null,
    allowedOrigins: ['http://localhost:5173'],
    chains: [...DEFAULT_CHAIN_IDS],
    smsCountries: ['US'],
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  }
}

export function user(email = 'ada@example.com', id = 'did:latch:user1'): User {
  const account: EmailAccount = {
    type: 'email',
    address: email,
    verifiedAt: '2026-01-01T00:00:00.000Z',
  }
  return { id, createdAt: '2026-01-01T00:00:00.000Z', linkedAccounts: [account], email: account }
}

/** An unsigned JWT-shaped token expiring at `exp` (seconds): the modal only reads exp. */
export function jwt(exp: number, sub = 'did:latch:user1'): string {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
  return `${b64({ alg: 'ES256', typ: 'JWT' })}.${b64({ sub, exp })}.sig`
}

/**
 * An authenticate call's answer (as the API double serves it) signing `who` in for an hour; the
 * refresh token would be in the API's cookie, which no body carries.
 */
export function authAnswer(who: User, isNewUser: boolean) {
  return {
    body: {
      user: who,
      token: jwt(Math.floor(Date.now() / 1000) + 3600),
      is_new_user: isNewUser,
    },
  }
}
