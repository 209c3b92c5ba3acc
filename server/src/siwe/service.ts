/**
 * Sign-In with Ethereum: nonces (issued, bound, used once) and the verification of a signed
 * message down to a wallet account. Threat model: README.md beside this file.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { caip2, getChain, LatchError, SIWE_SECRET_HEADER, type WalletAccount } from '@latch/shared'
import type { Selectable } from 'kysely'
import {
  createPublicClient,
  getAddress,
  type Hex,
  hashMessage,
  http,
  isAddressEqual,
  recoverAddress,
} from 'viem'
import { getChainId, verifyHash } from 'viem/actions'
import type { NewAccount } from '../accounts/service.ts'
import type { AppRecord } from '../apps/service.ts'
import { rpcUrlFor } from '../chains/rpc-urls.ts'
import type { Deps } from '../context.ts'
import type { SiweNoncesTable } from '../db/schema.ts'
import { checkOrigin, checkTerms, readSiweMessage, type SiweRefusal } from './message.ts'

/** How long an issued nonce may wait for its signed message. */
export const SIWE_NONCE_TTL_MS = 10 * 60_000
/** How long the chain's node may take to answer an EIP-1271 / EIP-6492 check. */
export const SIWE_RPC_TIMEOUT_MS = 10_000

export type SiweNonceRow = Selectable<SiweNoncesTable>

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * A fresh nonce for `address` in `app`: 128 random bits as 32 hex characters (EIP-4361 wants
 * at least 8 alphanumerics). Stored by its hash with the user who asked (null when signed out)
 * and the browser's hash, if it sent one.
 */
export async function issueNonce(
  deps: Deps,
  input: { appId: string; address: string; userId: string | null; browserHash: string | null },
): Promise<string> {
  const nonce = randomBytes(16).toString('hex')
  const now = deps.clock.now()
  await deps.db
    .insertInto('siwe_nonces')
    .values({
      nonce_hash: sha256(nonce),
      app_id: input.appId,
      address: input.address.toLowerCase(),
      user_id: input.userId,
      browser_hash: input.browserHash,
      expires_at: new Date(now.getTime() + SIWE_NONCE_TTL_MS),
      created_at: now,
    })
    .execute()
  return nonce
}

/**
 * Uses up the nonce if it was issued for this app and address: DELETE … RETURNING, so of two
 * requests with one message exactly one gets the row. Answers the row while it is unexpired.
 */
async function takeNonce(
  deps: Deps,
  appId: string,
  address: string,
  nonce: string,
): Promise<SiweNonceRow | undefined> {
  const row = await deps.db
    .deleteFrom('siwe_nonces')
    .where('nonce_hash', '=', sha256(nonce))
    .where('app_id', '=', appId)
    .where('address', '=', address.toLowerCase())
    .returningAll()
    .executeTakeFirst()
  if (!row || new Date(row.expires_at).getTime() <= deps.clock.now().getTime()) return undefined
  return row
}

/** Whether `secret` (base64url) hashes to `hash` (base64url SHA-256), in constant time. */
function secretMatches(secret: string | undefined, hash: string): boolean {
  if (!secret) return false
  const got = createHash('sha256').update(secret).digest()
  const want = Buffer.from(hash, 'base64url')
  return got.length === want.length && timingSafeEqual(got, want)
}

/**
 * Whether `signature` is `address`'s over `message` (EIP-191): an EOA's by recovering the key
 * locally; otherwise, through the chain's node, a deployed contract wallet's (EIP-1271) or a
 * not yet deployed one's (EIP-6492, checked by viem's deployless validator in an eth_call).
 */
export async function verifyWalletSignature(
  input: { address: Hex; message: string; signature: Hex; chainId: number; rpcUrl: string },
  log: (line: string) => void,
): Promise<SiweRefusal | null> {
  const hash = hashMessage(input.message)
  if (input.signature.length === 132) {
    try {
      const signer = await recoverAddress({ hash, signature: input.signature })
      if (isAddressEqual(signer, input.address)) return null
    } catch {
      // Not a recoverable ECDSA signature: a contract wallet's may still verify.
    }
  }
  const client = createPublicClient({
    transport: http(input.rpcUrl, { timeout: SIWE_RPC_TIMEOUT_MS, retryCount: 0 }),
  })
  // Only the first line of viem's error: the lines after it name the URL, which may carry the
  // node provider's API key.
  const unanswered = (e: unknown): SiweRefusal => {
    log(
      `[latch] siwe: the chain's node did not answer: ${String((e as Error).message).split('\n')[0]}`,
    )
    return 'rpc_unavailable'
  }
  // viem reads a failed eth_call as an invalid signature; asking the chain id first tells a
  // dead or misconfigured node (one serving another chain) apart, for the operator's log.
  try {
    const served = await getChainId(client)
    if (served !== input.chainId) {
      log(`[latch] siwe: the node for chain ${input.chainId} serves chain ${served}`)
      return 'rpc_unavailable'
    }
  } catch (e) {
    return unanswered(e)
  }
  try {
    const valid = await verifyHash(client, {
      address: input.address,
      hash,
      signature: input.signature,
    })
    return valid ? null : 'signature'
  } catch (e) {
    return unanswered(e)
  }
}

export interface SiweAttempt {
  app: AppRecord
  message: string
  signature: Hex
  chainId: number
  walletClientType: string
  connectorType: string
  /** The signed-in user for a link, null for a sign-in. */
  userId: string | null
  /** The SIWE_SECRET_HEADER the request carried. */
  browserSecret: string | undefined
}

/**
 * Verifies a signed message end to end and answers the wallet account it proves. The nonce is
 * used up before anything else is checked, so a refused message cannot be tried again.
 * Refusals: siwe_not_initialized (no such nonce for this app and address, used, expired, or
 * issued to another user or browser), unsupported_chain, wallet_login_failed (the message or
 * its signature; the reason goes to the log).
 */
export async function verifySiwe(
  deps: Deps,
  attempt: SiweAttempt,
): Promise<NewAccount<WalletAccount>> {
  const { app } = attempt
  const refuse = (reason: SiweRefusal) => {
    deps.log(`[latch] siwe: app ${app.id}: message refused (${reason})`)
    return LatchError.of('wallet_login_failed')
  }
  const msg = readSiweMessage(attempt.message)
  if (!msg) throw refuse('malformed')
  const row = await takeNonce(deps, app.id, msg.address, msg.nonce)
  if (!row) throw LatchError.of('siwe_not_initialized')
  // A nonce asked for signed out serves a sign-in only; one asked by a user, that user's link.
  if (row.user_id !== attempt.userId) throw LatchError.of('siwe_not_initialized')
  if (row.browser_hash !== null && !secretMatches(attempt.browserSecret, row.browser_hash)) {
    deps.log(`[latch] siwe: app ${app.id}: ${SIWE_SECRET_HEADER} missing or wrong`)
    throw LatchError.of('siwe_not_initialized')
  }
  if (!getChain(msg.chainId)) throw LatchError.of('unsupported_chain')
  if (msg.chainId !== attempt.chainId) throw refuse('chain')
  const origin = checkOrigin(msg, app.allowedOrigins)
  if (!origin.ok) throw refuse(origin.refusal)
  const terms = checkTerms(msg, deps.clock.now(), new Date(row.created_at))
  if (terms) throw refuse(terms)
  const signature = await verifyWalletSignature(
    {
      address: msg.address,
      message: attempt.message,
      signature: attempt.signature,
      chainId: msg.chainId,
      // The app's node for the chain, else the operator's, else the public one.
      rpcUrl: rpcUrlFor(deps.config, app, msg.chainId),
    },
    deps.log,
  )
  if (signature) throw refuse(signature)
  return {
    type: 'wallet',
    address: getAddress(msg.address),
    chainType: 'ethereum',
    chainId: caip2(msg.chainId),
    walletClient: 'unknown',
    walletClientType: attempt.walletClientType,
    connectorType: attempt.connectorType,
    recoveryMethod: null,
  }
}
