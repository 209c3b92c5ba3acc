/**
 * Creating a wallet: a challenge for the new key's proof of possession, the passcode wallet's
 * first OPRF evaluation under a fresh key (a sealed ticket), and the wallet stored and linked as
 * the user's in-app wallet account once its proof holds.
 */
import { randomBytes } from 'node:crypto'
import {
  LatchError,
  type User,
  type WalletAccount,
  type walletCreateBody,
  walletCreationDigest,
  walletCreationMessage,
} from '@latch/shared'
import { recoverMessageAddress } from 'viem'
import type { z } from 'zod'
import { linkInAppWallet } from '../accounts/service.ts'
import type { Deps } from '../context.ts'
import { randomId } from '../crypto.ts'
import { counterMac, NO_ATTEMPTS, withMac } from './attempts.ts'
import { evaluate, oprfSeed } from './oprf.ts'
import { hasWallet, type Recovery } from './records.ts'
import { insertPasskey, type Place, placeOf, walletKey } from './sealed.ts'

/** How long a create ticket and a pending evaluation stay usable. */
const TICKET_MS = 10 * 60_000
/** How long a creation challenge stays usable. */
const CHALLENGE_MS = 10 * 60_000
const DEFAULT_CHAIN = 'eip155:1'

function isUniqueViolation(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === '23505'
}

/**
 * A challenge for a creation's proof of possession: sealed for this app and user, 10 minutes.
 * The new key signs it with everything the creation stores (shared/src/wallet-proof.ts).
 */
export function walletChallenge(deps: Deps, appId: string, userId: string): { challenge: string } {
  const expires = deps.clock.now().getTime() + CHALLENGE_MS
  const nonce = randomBytes(16).toString('base64url')
  const challenge = deps.secrets.encrypt(
    JSON.stringify({ a: appId, u: userId, e: expires, n: nonce }),
    'latch-wallet-challenge',
  )
  return { challenge }
}

const badProof = (why: string) =>
  LatchError.of('invalid_data', { message: `Request body is invalid: proof: ${why}` })

/** Refuses a creation whose proof is not the address's key signing this creation for this user. */
async function checkProof(
  deps: Deps,
  appId: string,
  userId: string,
  body: z.infer<typeof walletCreateBody>,
): Promise<void> {
  let value: { a?: unknown; u?: unknown; e?: unknown }
  try {
    value = JSON.parse(deps.secrets.decrypt(body.proof.challenge, 'latch-wallet-challenge'))
  } catch {
    throw badProof('not a challenge of this server')
  }
  if (value.a !== appId || value.u !== userId) throw badProof('not a challenge of this user')
  if (typeof value.e !== 'number' || value.e < deps.clock.now().getTime()) {
    throw badProof('the challenge has expired')
  }
  const digest = await walletCreationDigest({
    challenge: body.proof.challenge,
    address: body.address,
    chainId: body.chainId,
    authShare: body.authShare,
    recovery: body.recovery,
  })
  let signer: string
  try {
    signer = await recoverMessageAddress({
      message: walletCreationMessage(body.address, digest),
      signature: body.proof.signature as `0x${string}`,
    })
  } catch {
    throw badProof('not a signature')
  }
  if (walletKey(signer) !== walletKey(body.address)) {
    throw badProof('not signed by the key of this address')
  }
}

/**
 * The first half of creating a wallet with a passcode: evaluates the frame's blinded passcode
 * under a fresh key and answers a sealed ticket naming that key, which create then binds to the
 * wallet. Each call draws a new key, so evaluations here never help guess an existing wallet.
 */
export async function beginPasscode(
  deps: Deps,
  appId: string,
  userId: string,
  blinded: string,
): Promise<{ evaluated: string; ticket: string }> {
  if (await hasWallet(deps, userId)) throw LatchError.of('wallet_already_exists')
  const nonce = randomBytes(32).toString('hex')
  const evaluated = evaluate(oprfSeed(deps.secrets, nonce), blinded)
  const expires = deps.clock.now().getTime() + TICKET_MS
  const ticket = deps.secrets.encrypt(
    JSON.stringify({ a: appId, u: userId, n: nonce, e: expires }),
    'latch-wallet-ticket',
  )
  return { evaluated, ticket }
}

/**
 * The nonce a ticket names, and the seed its evaluation used when that was under the previous
 * secret (a ticket from a process not yet given the new one, during a rotation).
 */
function openTicket(
  deps: Deps,
  appId: string,
  userId: string,
  ticket: string,
): { nonce: string; seed?: string } {
  const bad = LatchError.of('invalid_data', {
    message: 'Request body is invalid: recovery.ticket: not a ticket of this user, or expired',
  })
  let value: { a?: unknown; u?: unknown; n?: unknown; e?: unknown }
  let previous: boolean
  try {
    const opened = deps.secrets.open(ticket, 'latch-wallet-ticket')
    value = JSON.parse(opened.value)
    previous = opened.previous
  } catch {
    throw bad
  }
  if (value.a !== appId || value.u !== userId || typeof value.n !== 'string') throw bad
  if (typeof value.e !== 'number' || value.e < deps.clock.now().getTime()) throw bad
  if (previous && deps.secrets.previous) {
    return { nonce: value.n, seed: oprfSeed(deps.secrets.previous, value.n) }
  }
  return { nonce: value.n }
}

/**
 * Stores a new wallet for the user and links it as the user's in-app wallet account, once its
 * proof of possession holds. Answers wallet_already_exists when the user has one.
 */
export async function createWallet(
  deps: Deps,
  appId: string,
  userId: string,
  body: z.infer<typeof walletCreateBody>,
): Promise<{ user: User; wallet: WalletAccount }> {
  await checkProof(deps, appId, userId, body)
  const now = deps.clock.now()
  const recovery: Recovery =
    body.recovery.method === 'latch'
      ? { method: 'latch', key: body.recovery.key, ciphertext: body.recovery.ciphertext }
      : body.recovery.method === 'passkey'
        ? { method: 'passkey' }
        : {
            method: 'user-passcode',
            salt: body.recovery.salt,
            ciphertext: body.recovery.ciphertext,
            verifier: body.recovery.verifier,
            ...openTicket(deps, appId, userId, body.recovery.ticket),
          }
  const place: Place = { id: randomId(20), app_id: appId, user_id: userId, address: body.address }
  const passkey = body.recovery.method === 'passkey' ? body.recovery : null
  const attempts = withMac(deps, place.id, NO_ATTEMPTS)
  try {
    await deps.db
      .with('wallet', (db) =>
        db.insertInto('wallets').values({
          id: place.id,
          app_id: appId,
          user_id: userId,
          address: walletKey(body.address),
          chain_id: body.chainId ?? DEFAULT_CHAIN,
          recovery_method: recovery.method,
          auth_share_sealed: deps.secrets.encrypt(body.authShare, placeOf('auth-share', place)),
          recovery_sealed: deps.secrets.encrypt(
            JSON.stringify(recovery),
            placeOf('recovery', place),
          ),
          ...attempts,
          created_at: now,
        }),
      )
      // Its attempt counter in the same statement: a wallet never exists without one.
      .insertInto('wallet_attempts')
      .values({
        wallet_id: place.id,
        counter: 0,
        mac: counterMac(deps, place.id, 0, attempts.state_mac),
      })
      .execute()
    if (passkey) {
      await insertPasskey(deps, place, passkey, now).catch(async (e: unknown) => {
        // No passkey wallet without its passkey: the user may try again.
        await deps.db.deleteFrom('wallets').where('id', '=', place.id).execute()
        throw e
      })
    }
  } catch (e) {
    // One wallet per user (and an address is never stored twice).
    if (isUniqueViolation(e)) throw LatchError.of('wallet_already_exists')
    if ((e as { code?: unknown }).code === '23503') {
      throw LatchError.of('not_found', { message: 'User not found' })
    }
    throw e
  }
  const account = {
    type: 'wallet',
    address: body.address as WalletAccount['address'],
    chainType: 'ethereum',
    chainId: body.chainId ?? DEFAULT_CHAIN,
    walletClient: 'latch',
    walletClientType: 'latch',
    connectorType: 'embedded',
    recoveryMethod: recovery.method,
  } as const
  try {
    const user = await linkInAppWallet(deps, appId, userId, account, now)
    const wallet = user.linkedAccounts.find(
      (a): a is WalletAccount =>
        a.type === 'wallet' && walletKey(a.address) === walletKey(body.address),
    )
    if (!wallet) throw new Error('the wallet account was not linked')
    return { user, wallet }
  } catch (e) {
    // No wallet row without its account: the user may try again.
    await deps.db.deleteFrom('wallets').where('id', '=', place.id).execute()
    throw e
  }
}
