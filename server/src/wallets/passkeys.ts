/**
 * Recovery by passkey, the server's half (docs/architecture.md, "Recovery by passkey"). The
 * wallet frame seals a share under a key it derives from a passkey's PRF output; the server keeps
 * the credential id, the PRF salt and that sealing, and hands them back only to the wallet frame
 * of the owner's signed-in browser (the routes' gates). It never sees the PRF output, so nothing
 * it holds, its secret included, opens the share.
 *
 * Nothing is verified from an assertion here: the server has no secret to protect behind one.
 * What recovers the wallet is the PRF output opening the sealing, in the frame.
 */

import {
  LatchError,
  type WalletPasskeyOptionsResponse,
  type WalletPasskeyRecoverResponse,
  type WalletPasskeySealing,
} from '@latch/shared'
import type { Config } from '../config.ts'
import type { Deps } from '../context.ts'
import { defaultRpId } from '../passkeys/rp-id.ts'
import { authShareOf, ownWallet, type WalletRow } from './records.ts'
import { insertPasskey, placeOfPasskey } from './sealed.ts'

/** Passkeys that may seal one wallet's share (each is one more way in; a few are plenty). */
export const MAX_WALLET_PASSKEYS = 10

const recordInvalid = () => LatchError.of('wallet_record_invalid')

/**
 * The WebAuthn RP ID of the wallet frame's ceremonies (the frame runs on the API origin): the
 * server's (config.passkeyRpId: LATCH_PASSKEY_RP_ID, else derived by passkeys/rp-id.ts), else
 * the same derivation from this request's host (a server without LATCH_PUBLIC_URL).
 */
export function passkeyRpId(
  config: Pick<Config, 'passkeyRpId' | 'publicUrl'>,
  requestUrl: string,
): string {
  if (config.passkeyRpId) return config.passkeyRpId
  const host = new URL(config.publicUrl ?? requestUrl).hostname
  return defaultRpId(host) ?? host
}

export function passkeyOptions(
  deps: Deps,
  app: { id: string; name: string },
  userId: string,
  requestUrl: string,
): WalletPasskeyOptionsResponse {
  return { rpId: passkeyRpId(deps.config, requestUrl), rpName: app.name, userId }
}

/**
 * Adds a passkey sealing to the user's wallet (the frame sealed the share its device holds). The
 * same credential again replaces nothing: passkey_failed says it is there already. Its route
 * refuses an unpaired fork first (routes.ts): one could fill MAX_WALLET_PASSKEYS with junk.
 */
export async function addPasskey(
  deps: Deps,
  appId: string,
  userId: string,
  body: { address: string } & WalletPasskeySealing,
): Promise<{ added: true }> {
  const row = await ownWallet(deps, appId, userId, body.address)
  const existing = await deps.db
    .selectFrom('wallet_passkeys')
    .select('credential_id')
    .where('wallet_id', '=', row.id)
    .execute()
  if (existing.some((p) => p.credential_id === body.credentialId)) {
    throw LatchError.of('invalid_data', {
      message: 'Request body is invalid: credentialId: this passkey already protects the wallet',
    })
  }
  if (existing.length >= MAX_WALLET_PASSKEYS) {
    throw LatchError.of('invalid_data', {
      message: `Request body is invalid: a wallet has at most ${MAX_WALLET_PASSKEYS} passkeys`,
    })
  }
  await insertPasskey(deps, row, body, deps.clock.now())
  return { added: true }
}

/** The wallet's sealings, opened from the server's seal (each still sealed under its passkey). */
async function sealingsOf(deps: Deps, row: WalletRow): Promise<WalletPasskeySealing[]> {
  const rows = await deps.db
    .selectFrom('wallet_passkeys')
    .select(['credential_id', 'sealing_sealed'])
    .where('wallet_id', '=', row.id)
    .orderBy('created_at')
    .execute()
  return rows.map((p) => {
    let value: { salt: string; ciphertext: string }
    try {
      value = JSON.parse(
        deps.secrets.decrypt(p.sealing_sealed, placeOfPasskey(row, p.credential_id)),
      )
    } catch {
      deps.log(`[latch] wallet ${row.id}: a passkey sealing does not open for its row`)
      throw recordInvalid()
    }
    return { credentialId: p.credential_id, salt: value.salt, ciphertext: value.ciphertext }
  })
}

/**
 * A new device recovering with a passkey: the auth share and every passkey sealing. Without the
 * passkey's PRF output they open nothing, so no fork confirmation or attempt count is needed:
 * what is released here is what /wallets/shares releases, plus ciphertexts.
 */
export async function recoverWithPasskey(
  deps: Deps,
  appId: string,
  userId: string,
  address: string,
  requestUrl: string,
): Promise<WalletPasskeyRecoverResponse> {
  const row = await ownWallet(deps, appId, userId, address)
  const passkeys = await sealingsOf(deps, row)
  if (passkeys.length === 0) {
    throw LatchError.of('recovery_not_allowed', {
      status: 404,
      message: 'This wallet has no passkey',
    })
  }
  return {
    authShare: authShareOf(deps, row),
    rpId: passkeyRpId(deps.config, requestUrl),
    userId,
    passkeys,
  }
}
