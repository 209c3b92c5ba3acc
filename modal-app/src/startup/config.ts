/**
 * The host configuration, checked by the input rules (docs/behaviour.md, "Input rules") and merged
 * with the server's app configuration. The server wins on what it enforces (which login methods
 * exist, the allowlist); the host chooses the look where the server leaves it open.
 */
import {
  DEFAULT_ACCENT_COLOR,
  DEFAULT_SHOW_WALLET_LOGIN_FIRST,
  DEFAULT_THEME,
  type HostAppConfig,
  LatchError,
  LOGIN_METHOD_FLAGS,
  type LoginMethod,
  loginMethodFlags,
  OAUTH_PROVIDERS,
  type OAuthProvider,
  type Palette,
  type ServerAppConfig,
  type ThemeSetting,
} from '@latch/shared'

export interface LoginMethods {
  wallet: boolean
  email: boolean
  sms: boolean
  social: OAuthProvider[]
  passkey: boolean
}

/** What the screens read: the merged configuration, resolved to concrete values. */
export interface AppView {
  /** The merged configuration, as init answers it. */
  config: ServerAppConfig
  name: string
  logoUrl: string | null
  theme: ThemeSetting
  accentColor: string
  palette: Palette
  showWalletLoginFirst: boolean
  methods: LoginMethods
  /** The app's rejection texts; null where it has none (the screen's default, translated). */
  allowlist: {
    title: string | null
    detail: string | null
    ctaText: string | null
    ctaLink: string | null
  }
  legal: { termsUrl: string | null; privacyUrl: string | null }
  inDialog: boolean
}

/** Merges a checked host configuration into the server's. */
export function mergeConfig(server: ServerAppConfig, host: HostAppConfig): AppView {
  const enabled = (m: LoginMethod): boolean =>
    server[LOGIN_METHOD_FLAGS[m]] === true &&
    (host.loginMethods ? host.loginMethods.includes(m) : true)
  const email = enabled('email')
  // One code section only: with both on, e-mail wins and SMS is turned off.
  const sms = enabled('sms') && !email
  const social = OAUTH_PROVIDERS.filter(enabled)
  const wallet = enabled('wallet')
  const passkey = enabled('passkey')
  if (!email && !sms && !wallet && !passkey && social.length === 0) {
    throw LatchError.of('no_login_method')
  }

  const appearance = host.appearance ?? {}
  const theme = appearance.theme ?? server.theme ?? DEFAULT_THEME
  const accentColor = appearance.accentColor ?? server.accentColor ?? DEFAULT_ACCENT_COLOR
  const logoUrl = appearance.logo ?? server.logoUrl ?? null
  const showWalletLoginFirst =
    appearance.showWalletLoginFirst ??
    server.showWalletLoginFirst ??
    DEFAULT_SHOW_WALLET_LOGIN_FIRST
  const allow = server.allowlistConfig
  const hostAllow = host.allowlistConfig ?? {}
  const termsUrl = host.legal?.termsAndConditionsUrl ?? server.termsAndConditionsUrl ?? null
  const privacyUrl = host.legal?.privacyPolicyUrl ?? server.privacyPolicyUrl ?? null

  const config: ServerAppConfig = {
    ...server,
    logoUrl,
    accentColor,
    theme,
    showWalletLoginFirst,
    // What the modal shows: SMS off when e-mail wins, every other method as enabled.
    ...loginMethodFlags((m) => (m === 'sms' ? sms : enabled(m))),
    termsAndConditionsUrl: termsUrl,
    privacyPolicyUrl: privacyUrl,
    // The page's WalletConnect Cloud project wins over the server's, as its other settings do.
    walletConnectCloudProjectId:
      host.walletConnectCloudProjectId ?? server.walletConnectCloudProjectId ?? null,
    // The in-app wallet settings the page gives win over the server's (the page is where the
    // app's developer decides when wallets are made); 'all-users' exists on the server only.
    embeddedWalletConfig: {
      createOnLogin:
        host.embeddedWallets?.createOnLogin ?? server.embeddedWalletConfig.createOnLogin,
      requireUserPasswordOnCreate:
        host.embeddedWallets?.requireUserPasswordOnCreate ??
        server.embeddedWalletConfig.requireUserPasswordOnCreate,
    },
  }
  return {
    config,
    name: server.name || host.name || '',
    logoUrl,
    theme,
    accentColor,
    palette: appearance.palette ?? {},
    showWalletLoginFirst,
    methods: { wallet, email, sms, social, passkey },
    allowlist: {
      title: allow?.errorTitle || hostAllow.errorTitle || null,
      detail: allow?.errorDetail || hostAllow.errorDetail || null,
      ctaText: allow?.errorCtaText || hostAllow.errorCtaText || null,
      ctaLink: allow?.errorCtaLink || hostAllow.errorCtaLink || null,
    },
    legal: { termsUrl, privacyUrl },
    // Inline only inside a parent element, as the host SDK mounts it: `inDialog: false` alone
    // stays a dialog (validateHostConfig warns), `inDialog: true` with a parent is inline.
    inDialog: !host.render?.inParentNodeId,
  }
}
