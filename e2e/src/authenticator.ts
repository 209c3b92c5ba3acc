/**
 * Chromium's virtual authenticator (CDP WebAuthn) for a page's tab, its frames included: a
 * platform authenticator (CTAP2, internal transport) with resident keys and user verification,
 * PRF as asked. Used by the passkey specs and the wallet frame's passkey test.
 */
import type { CDPSession, Page } from 'playwright-core'

/** A credential as CDP's WebAuthn domain reads and writes it (a synced passkey is a copy). */
export interface VirtualCredential {
  credentialId: string
  isResidentCredential: boolean
  rpId?: string
  privateKey: string
  userHandle?: string
  signCount: number
}

export interface VirtualAuthenticator {
  cdp: CDPSession
  authenticatorId: string
  /** The credentials it holds. */
  credentials(): Promise<VirtualCredential[]>
  /**
   * Whether the visitor answers its prompts. Off, a request waits as it does for a visitor who
   * does not pick a passkey (the landing's autofill request, started when the e-mail field takes
   * the focus); on, it answers at once.
   */
  present(enabled: boolean): Promise<void>
}

export interface VirtualAuthenticatorOptions {
  /** The PRF extension (hmac-secret); true unless said. */
  prf?: boolean
  /** Credentials it holds from the start (a passkey synced from another device). */
  credentials?: VirtualCredential[]
}

export async function virtualAuthenticator(
  page: Page,
  { prf = true, credentials = [] }: VirtualAuthenticatorOptions = {},
): Promise<VirtualAuthenticator> {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('WebAuthn.enable', { enableUI: false })
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      hasPrf: prf,
      automaticPresenceSimulation: true,
    },
  })
  for (const credential of credentials) {
    await cdp.send('WebAuthn.addCredential', { authenticatorId, credential })
  }
  return {
    cdp,
    authenticatorId,
    async credentials() {
      const res = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
      return res.credentials as VirtualCredential[]
    },
    async present(enabled) {
      await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled })
    },
  }
}
