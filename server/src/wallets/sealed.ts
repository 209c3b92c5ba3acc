/**
 * Where a wallet's sealed values belong (the associated data each is sealed with), and the row
 * of a passkey's sealing: below records.ts, create.ts and passkeys.ts, which write them.
 */
import type { WalletPasskeySealing } from '@latch/shared'
import { normalizeIdentifier } from '../accounts/service.ts'
import type { Deps } from '../context.ts'
import { randomId } from '../crypto.ts'

/** A wallet address as stored and compared: the account rule for wallet addresses. */
export const walletKey = (address: string) => normalizeIdentifier('wallet', address)

/** Where a sealed value belongs: it opens only in the row, for the user and address, it was made for. */
export interface Place {
  id: string
  app_id: string
  user_id: string
  address: string
}

export type SealedPurpose = 'auth-share' | 'recovery' | 'passkey'

/** The associated data of a wallet's sealed value: what it is and where it belongs. */
export function placeOf(purpose: SealedPurpose, w: Place): string {
  return ['latch-wallet', purpose, w.app_id, w.user_id, w.id, walletKey(w.address)].join('\n')
}

/** The sealing's associated data: the wallet's place and the credential it belongs to. */
export const placeOfPasskey = (w: Place, credentialId: string) =>
  `${placeOf('passkey', w)}\n${credentialId}`

/** Stores a sealing of the wallet (`place`) under a passkey. */
export async function insertPasskey(
  deps: Deps,
  place: Place,
  sealing: WalletPasskeySealing,
  now: Date,
): Promise<void> {
  const value = JSON.stringify({ salt: sealing.salt, ciphertext: sealing.ciphertext })
  await deps.db
    .insertInto('wallet_passkeys')
    .values({
      id: randomId(20),
      wallet_id: place.id,
      credential_id: sealing.credentialId,
      sealing_sealed: deps.secrets.encrypt(value, placeOfPasskey(place, sealing.credentialId)),
      created_at: now,
    })
    .execute()
}
