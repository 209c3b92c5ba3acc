/**
 * What the owner's device gets back: how its wallet recovers, the auth share for a device that
 * holds its device share, and automatic recovery (method 'latch'). A session opened by a fork
 * link gets shares only once paired from inside the wallet origin (fork-pair.ts).
 */
import { LatchError, type RecoveryMethod, type WalletSharesResponse } from '@latch/shared'
import type { Deps } from '../context.ts'
import { enqueueEvent } from '../webhooks/events.ts'
import { walletHandedOver } from './fork-pair.ts'
import { authShareOf, ownWallet, recoveryOf } from './records.ts'

/** How the wallet recovers, and the passcode KDF's salt (useless without the server). */
export async function walletInfo(deps: Deps, appId: string, userId: string, address: string) {
  const row = await ownWallet(deps, appId, userId, address)
  const recovery = recoveryOf(deps, row)
  return {
    recoveryMethod: recovery.method as RecoveryMethod,
    salt: recovery.method === 'user-passcode' ? recovery.salt : null,
  }
}

/** The auth share, for a device that holds its device share. */
export async function authShare(
  deps: Deps,
  appId: string,
  userId: string,
  sessionId: string,
  address: string,
): Promise<WalletSharesResponse> {
  const row = await ownWallet(deps, appId, userId, address)
  // A share-bearing route: an unpaired fork gets none (fork-pair.ts), whatever else it holds.
  if (!(await walletHandedOver(deps, sessionId))) {
    throw LatchError.of('fork_wallet_not_confirmed')
  }
  return { authShare: authShareOf(deps, row) }
}

/**
 * Automatic recovery: the auth share and the recovery share with its key, for method 'latch'.
 * A session opened by a fork link gets them only once paired from inside the wallet origin
 * (fork-pair.ts); passcode recovery needs no such pairing, it needs the passcode.
 */
export async function recoverLatch(
  deps: Deps,
  appId: string,
  userId: string,
  sessionId: string,
  address: string,
): Promise<WalletSharesResponse> {
  const row = await ownWallet(deps, appId, userId, address)
  const recovery = recoveryOf(deps, row)
  if (recovery.method !== 'latch') {
    throw LatchError.of('invalid_recovery_pin', {
      status: 400,
      message: `This wallet is recovered with its ${recovery.method === 'passkey' ? 'passkey' : 'passcode'}`,
    })
  }
  if (!(await walletHandedOver(deps, sessionId))) {
    throw LatchError.of('fork_wallet_not_confirmed')
  }
  const data = { userId, address: row.address, recoveryMethod: 'latch' }
  await enqueueEvent(deps.db, { appId, type: 'wallet.recovered', data, now: deps.clock.now() })
  return {
    authShare: authShareOf(deps, row),
    recovery: { ciphertext: recovery.ciphertext, key: recovery.key },
  }
}
