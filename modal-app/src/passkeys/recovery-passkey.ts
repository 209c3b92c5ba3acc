/**
 * The modal's part in recovery by passkey (docs/architecture.md, "Recovery by passkey"):
 * registering the passkey on the visitor's click. Chromium refuses `create` to the wallet frame,
 * a cross-origin frame without a click of its own, so the modal registers it under the frame's
 * RP ID with the PRF extension enabled and no input: no PRF output ever reaches the modal. The
 * frame then asks the passkey for its PRF output with a salt only it and the server know.
 */
import { LatchError } from '@latch/shared'
import type { WalletFrame } from '../wallet/frame.ts'
import {
  closePasskeyWindow,
  createInWindow,
  type PasskeyWindow,
  windowTexts,
} from './passkey-window.ts'

/** Whether this browser has WebAuthn at all (the passkey choices show only where it does). */
export function passkeysAvailable(): boolean {
  return typeof window !== 'undefined' && 'PublicKeyCredential' in window
}

const CEREMONY_MS = 50_000

/**
 * Registers a recovery passkey and answers its id (base64url); a LatchError on failure. In the
 * window opened for it (`target`, passkey-window.ts) where the frame may not create one.
 */
export async function registerRecoveryPasskey(
  frame: WalletFrame,
  accessToken: string,
  userName: string,
  target: PasskeyWindow | null,
): Promise<string> {
  let id: string
  let prfEnabled: boolean | undefined
  try {
    const { rpId, rpName } = await frame['latch:wallet:passkey-options']({ accessToken })
    const publicKey: PublicKeyCredentialCreationOptions = {
      rp: { id: rpId, name: rpName },
      // A handle of its own: a recovery passkey is not a sign-in account.
      user: {
        id: crypto.getRandomValues(new Uint8Array(16)),
        name: userName,
        displayName: userName,
      },
      challenge: crypto.getRandomValues(new Uint8Array(32)),
      pubKeyCredParams: [
        { type: 'public-key', alg: -7 },
        { type: 'public-key', alg: -257 },
      ],
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
      timeout: CEREMONY_MS,
      // Enabled only: asking for an output here would hand the modal what seals the share.
      extensions: { prf: {} } as AuthenticationExtensionsClientInputs,
    }
    if (target) {
      const created = await createInWindow(target, publicKey, windowTexts())
      id = created.json.id as string
      prfEnabled = created.prfEnabled
    } else {
      const credential = await navigator.credentials.create({ publicKey })
      if (!(credential instanceof PublicKeyCredential)) throw LatchError.of('passkey_failed')
      id = credential.id
      prfEnabled = (credential.getClientExtensionResults() as { prf?: { enabled?: boolean } }).prf
        ?.enabled
    }
  } catch (e) {
    closePasskeyWindow(target)
    if (e instanceof LatchError) throw e
    console.warn('Latch: the passkey was not registered', e)
    throw LatchError.of('passkey_failed', { cause: e })
  }
  // Said now rather than after a second prompt: this authenticator has no PRF.
  if (prfEnabled === false) throw LatchError.of('passkey_prf_unsupported')
  return id
}
