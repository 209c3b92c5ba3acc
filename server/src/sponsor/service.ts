/**
 * A sponsored batch: the wallet frame sends the batch its key signed (and, the first time, the
 * EIP-7702 authorization delegating the account to Latch's contract); the server checks them
 * and the app's policy, simulates, and sends ONE type-4 transaction from the app's sponsor that
 * calls the account's `execute`. The server signs only the sponsor's own transaction: the batch
 * and the delegation are the visitor's, signed in the wallet frame after their click, and the
 * contract acts only on a batch the account's key signed.
 *
 * Order of the checks (the first that fails answers; nothing is written before the send):
 * sponsor on the chain, the user's own in-app wallet, the deadline, the policy (contracts,
 * selectors), the batch signature, the authorization (Latch's contract only, this chain, this
 * account), the chain's rules (Prague), the account's delegation, the simulation, the gas cap,
 * then under the sponsor's row lock: the day's budgets, the sponsor's balance, the send.
 */
import { createHash, randomBytes } from 'node:crypto'
import {
  BATCH_DOMAIN,
  BATCH_TYPES,
  type BatchCall,
  LATCH_DELEGATE_ADDRESS,
  LatchError,
} from '@latch/shared'
import { sql } from 'kysely'
import {
  BaseError,
  type Chain,
  createPublicClient,
  createWalletClient,
  decodeErrorResult,
  defineChain,
  encodeFunctionData,
  getAddress,
  type Hex,
  HttpRequestError,
  http,
  isAddressEqual,
  type PublicClient,
  recoverTypedDataAddress,
  type SignedAuthorization,
  TimeoutError,
  type Transport,
  toHex,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { recoverAuthorizationAddress } from 'viem/utils'
import type { AppRecord } from '../apps/service.ts'
import { rpcUrlFor } from '../chains/rpc-urls.ts'
import type { Deps } from '../context.ts'
import { eventInsert } from '../webhooks/events.ts'
import { LATCH_DELEGATE_ABI } from './delegate-artifact.ts'
import { findSponsor, listSponsors, type Sponsor, spentToday, sponsorKey } from './store.ts'

/** The most calls in one batch. */
export const MAX_CALLS = 16
/** A batch's deadline may be at most this far ahead: what a signed batch is good for. */
export const MAX_DEADLINE_S = 60 * 60
/** Headroom over the node's estimate, within the policy's cap. */
const GAS_HEADROOM = 5n // +20 %
const RPC_TIMEOUT_MS = 10_000
/** How long a chain's answer to "does it run Prague?" is kept. */
const RULES_TTL_MS = 5 * 60_000

export interface SignedAuthorizationBody {
  address: string
  chainId: number
  nonce: number
  r: string
  s: string
  yParity: number
}

export interface SponsorBatchBody {
  chainId: number
  /** The in-app wallet's address: the account that executes the batch. */
  account: string
  calls: BatchCall[]
  /** The account's next batch nonce (decimal text). */
  nonce: string
  /** Unix seconds. */
  deadline: number
  /** The account key's EIP-712 signature of the batch (65 bytes). */
  signature: string
  /** The account's EIP-7702 authorization, when it has not delegated yet. */
  authorization?: SignedAuthorizationBody
  /** The dapp's own id for the batch (EIP-5792's `id`, 0x and hex), when it gave one. */
  id?: string
}

export interface CallsStatus {
  version: '2.0.0'
  id: string
  chainId: Hex
  /** EIP-5792: 100 pending, 200 confirmed, 500 reverted on chain. */
  status: 100 | 200 | 500
  atomic: true
  receipts?: {
    logs: { address: Hex; data: Hex; topics: Hex[] }[]
    status: Hex
    blockHash: Hex
    blockNumber: Hex
    gasUsed: Hex
    transactionHash: Hex
  }[]
}

const refuse = (code: Parameters<typeof LatchError.of>[0], message: string) =>
  LatchError.of(code, { message })

interface ChainAccess {
  chain: Chain
  transport: Transport
  client: PublicClient
}

function access(deps: Deps, app: AppRecord, chainId: number): ChainAccess {
  const url = rpcUrlFor(deps.config, app, chainId)
  const chain = defineChain({
    id: chainId,
    name: `chain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  })
  const transport = http(url, { timeout: RPC_TIMEOUT_MS, retryCount: 0 })
  return { chain, transport, client: createPublicClient({ chain, transport }) as PublicClient }
}

const rules = new Map<string, { prague: boolean; at: number }>()

/** Whether the chain runs EIP-7702: a Prague block header carries `requestsHash` (EIP-7685). */
async function runsPrague(deps: Deps, key: string, client: PublicClient): Promise<boolean> {
  const now = deps.clock.now().getTime()
  const known = rules.get(key)
  if (known && now - known.at < RULES_TTL_MS) return known.prague
  const block = (await client.request({
    method: 'eth_getBlockByNumber',
    params: ['latest', false],
  })) as { requestsHash?: string } | null
  const prague = typeof block?.requestsHash === 'string'
  rules.set(key, { prague, at: now })
  return prague
}

/** The user's in-app wallet with this address, or null. */
async function ownsInAppWallet(
  deps: Deps,
  appId: string,
  userId: string,
  account: string,
): Promise<boolean> {
  const row = await deps.db
    .selectFrom('wallets')
    .select('id')
    .where('app_id', '=', appId)
    .where('user_id', '=', userId)
    .where(sql<string>`lower(address)`, '=', account.toLowerCase())
    .executeTakeFirst()
  if (row) return true
  const linked = await deps.db
    .selectFrom('linked_accounts')
    .select('data')
    .where('app_id', '=', appId)
    .where('user_id', '=', userId)
    .where('type', '=', 'wallet')
    .where('identifier', '=', account.toLowerCase())
    .executeTakeFirst()
  return (linked?.data as { walletClient?: string } | undefined)?.walletClient === 'latch'
}

/** Calls the policy does not pay for, as one sentence; null when it pays for all. */
function outsidePolicy(sponsor: Sponsor, calls: readonly BatchCall[]): string | null {
  for (const [i, call] of calls.entries()) {
    const allowed = sponsor.policy.contracts[call.to.toLowerCase()]
    const selector = call.data.length >= 10 ? call.data.slice(0, 10).toLowerCase() : '0x'
    if (!allowed)
      return `Call ${i + 1} is to ${getAddress(call.to)}, a contract the app does not pay for`
    if (!allowed.includes('*') && !allowed.includes(selector)) {
      return `Call ${i + 1} calls function ${selector} of ${getAddress(call.to)}, which the app does not pay for`
    }
  }
  return null
}

const delegationCode = `0xef0100${LATCH_DELEGATE_ADDRESS.slice(2).toLowerCase()}`

/** The revert of a simulation, as the refusal's details. */
function revertReason(e: unknown): string {
  if (e instanceof BaseError) {
    const raw = e.walk((x) => typeof (x as { data?: unknown }).data === 'string') as {
      data?: Hex
    } | null
    if (raw?.data && raw.data !== '0x') {
      try {
        const decoded = decodeErrorResult({ abi: LATCH_DELEGATE_ABI, data: raw.data })
        if (decoded.errorName === 'CallFailed') {
          const [index] = decoded.args as readonly [bigint, Hex]
          return `Call ${Number(index) + 1} reverted`
        }
        if (decoded.errorName === 'BadNonce') return 'The batch nonce is not the account’s next'
        if (decoded.errorName === 'Expired') return 'The batch is past its deadline'
        if (decoded.errorName === 'BadSignature') return 'The batch is not signed by the account'
        return decoded.errorName
      } catch {
        // Not one of the delegate's errors.
      }
    }
    return e.shortMessage
  }
  return 'The node refused the batch'
}

/** The node could not be reached or did not answer in time (as opposed to refusing the batch). */
function nodeDown(e: unknown): boolean {
  return (
    e instanceof BaseError &&
    e.walk((x) => x instanceof HttpRequestError || x instanceof TimeoutError) !== null
  )
}

/** A read or send through the chain's node; its failure is a clear 502, never a 500. */
async function node<T>(work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (e) {
    if (e instanceof LatchError) throw e
    throw LatchError.of('rpc_internal', {
      status: 502,
      message: `The chain's node did not answer: ${e instanceof BaseError ? e.shortMessage : 'no answer'}`,
    })
  }
}

/**
 * The row key of a batch whose id the dapp chose: a hash of the app, the user and that id, so
 * two users' (or apps') equal ids never meet and a duplicate is one user's own. Ids Latch makes
 * are stored as they are.
 */
export function dappBatchKey(appId: string, userId: string, id: string): string {
  return `0x${createHash('sha256').update(`latch-batch\n${appId}\n${userId}\n${id.toLowerCase()}`).digest('hex')}`
}

const isUniqueViolation = (e: unknown) =>
  typeof e === 'object' && e !== null && (e as { code?: unknown }).code === '23505'

const duplicateId = () =>
  LatchError.of('calls_duplicate_id', {
    message: 'A batch with this id was already sent: give each batch its own id',
  })

/** Whether the user already has a batch under this dapp id (stored hashed, or as Latch made it). */
async function idTaken(db: Deps['db'], appId: string, userId: string, id: string) {
  const row = await db
    .selectFrom('sponsored_batches')
    .select('id')
    .where('app_id', '=', appId)
    .where('user_id', '=', userId)
    .where('id', 'in', [id.toLowerCase(), dappBatchKey(appId, userId, id)])
    .executeTakeFirst()
  return row !== undefined
}

const secondsToMidnight = (now: Date) =>
  Math.max(
    1,
    Math.ceil(
      (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) /
        1000,
    ),
  )

/** Checks, simulates and sends one sponsored batch; resolves with its EIP-5792 id. */
export async function sponsorBatch(
  deps: Deps,
  app: AppRecord,
  userId: string,
  body: SponsorBatchBody,
): Promise<{ id: string }> {
  const { chainId } = body
  const sponsor = await findSponsor(deps, app.id, chainId)
  if (!sponsor) {
    throw refuse('sponsor_unavailable', `This app does not pay network fees on chain ${chainId}`)
  }
  const account = getAddress(body.account)
  if (!(await ownsInAppWallet(deps, app.id, userId, account))) {
    throw refuse('batch_invalid', 'The account is not this user’s in-app wallet')
  }
  const now = deps.clock.now()
  const nowS = Math.floor(now.getTime() / 1000)
  if (body.deadline <= nowS || body.deadline > nowS + MAX_DEADLINE_S) {
    throw refuse('batch_invalid', 'The batch deadline is past or more than an hour ahead')
  }
  const outside = outsidePolicy(sponsor, body.calls)
  if (outside) throw refuse('sponsor_policy_refused', outside)
  const dappId = body.id?.toLowerCase()
  if (dappId && (await idTaken(deps.db, app.id, userId, dappId))) throw duplicateId()

  const calls = body.calls.map((c) => ({
    to: getAddress(c.to),
    value: BigInt(c.value),
    data: c.data as Hex,
  }))
  const nonce = BigInt(body.nonce)
  const deadline = BigInt(body.deadline)
  const signer = await recoverTypedDataAddress({
    domain: { ...BATCH_DOMAIN, chainId, verifyingContract: account },
    types: BATCH_TYPES,
    primaryType: 'Batch',
    message: { calls, nonce, deadline },
    signature: body.signature as Hex,
  }).catch(() => null)
  if (!signer || !isAddressEqual(signer, account)) {
    throw refuse('batch_invalid', 'The batch is not signed by the wallet’s key')
  }

  let authorization: SignedAuthorization | undefined
  if (body.authorization) {
    const a = body.authorization
    if (!isAddressEqual(getAddress(a.address), LATCH_DELEGATE_ADDRESS)) {
      throw refuse(
        'delegation_refused',
        `The authorization delegates to ${getAddress(a.address)}, not to Latch’s contract ${LATCH_DELEGATE_ADDRESS}`,
      )
    }
    if (a.chainId !== chainId) {
      throw refuse('batch_invalid', `The authorization is for chain ${a.chainId}, not ${chainId}`)
    }
    authorization = {
      address: LATCH_DELEGATE_ADDRESS,
      chainId: a.chainId,
      nonce: a.nonce,
      r: a.r as Hex,
      s: a.s as Hex,
      yParity: a.yParity,
    }
    const by = await recoverAuthorizationAddress({ authorization }).catch(() => null)
    if (!by || !isAddressEqual(by, account)) {
      throw refuse('batch_invalid', 'The authorization is not signed by the wallet’s key')
    }
  }

  const { chain, transport, client } = access(deps, app, chainId)
  if (
    !(await node(runsPrague(deps, `${chainId} ${rpcUrlFor(deps.config, app, chainId)}`, client)))
  ) {
    throw refuse(
      'sponsor_unavailable',
      `Chain ${chainId} does not run EIP-7702 (the Prague rules): the app cannot pay its fees here`,
    )
  }
  const code = ((await node(client.getCode({ address: account }))) ?? '0x').toLowerCase()
  if (authorization) {
    const accountNonce = await node(client.getTransactionCount({ address: account }))
    if (authorization.nonce !== accountNonce) {
      throw refuse('batch_invalid', 'The authorization’s nonce is not the account’s current one')
    }
  } else if (code !== delegationCode) {
    throw refuse(
      'batch_invalid',
      code === '0x'
        ? 'The wallet has not delegated to Latch’s contract yet: its authorization is needed'
        : 'The wallet delegates to another contract',
    )
  }

  const data = encodeFunctionData({
    abi: LATCH_DELEGATE_ABI,
    functionName: 'execute',
    args: [calls, nonce, deadline, body.signature as Hex],
  })
  const request = {
    account: sponsor.address,
    to: account,
    data,
    ...(authorization && { authorizationList: [authorization] }),
  }
  let estimate: bigint
  try {
    estimate = await client.estimateGas(request)
  } catch (e) {
    if (nodeDown(e)) return node(Promise.reject(e))
    throw refuse('batch_reverted', `This batch of calls would fail: ${revertReason(e)}`)
  }
  const cap = BigInt(sponsor.policy.gasCapPerBatch)
  if (estimate > cap) {
    throw refuse(
      'sponsor_policy_refused',
      `The batch needs ${estimate} gas, over the app’s cap of ${cap} per batch`,
    )
  }
  const gas = estimate + estimate / GAS_HEADROOM > cap ? cap : estimate + estimate / GAS_HEADROOM
  const fees = await node(client.estimateFeesPerGas())
  const maxFeePerGas = fees.maxFeePerGas
  const cost = gas * maxFeePerGas

  const id = dappId ?? `0x${randomBytes(32).toString('hex')}`
  const rowId = dappId ? dappBatchKey(app.id, userId, dappId) : id
  const key = await sponsorKey(deps, sponsor.id)
  const wallet = createWalletClient({ account: privateKeyToAccount(key), chain, transport })

  // One sponsor's batches one at a time: the budgets and the sponsor's nonce are read and
  // spent under its row lock, so two batches cannot both take the day's last wei.
  const transactionHash = await deps.db.transaction().execute(async (trx) => {
    await trx.selectFrom('sponsors').select('id').where('id', '=', sponsor.id).forUpdate().execute()
    const spent = await spentToday(trx, sponsor.id, userId, now)
    const retryAfter = secondsToMidnight(now)
    if (spent.user + cost > BigInt(sponsor.policy.userDailyWei)) {
      throw LatchError.of('sponsor_budget_exhausted', {
        message: 'This app’s budget for your network fees is used up for today',
        retryAfter,
      })
    }
    if (spent.app + cost > BigInt(sponsor.policy.appDailyWei)) {
      throw LatchError.of('sponsor_budget_exhausted', { retryAfter })
    }
    const [balance, sponsorNonce] = await node(
      Promise.all([
        client.getBalance({ address: sponsor.address }),
        client.getTransactionCount({ address: sponsor.address, blockTag: 'pending' }),
      ]),
    )
    if (balance < cost) {
      deps.log(
        `[latch] sponsor ${sponsor.address} of app ${app.id} on chain ${chainId} holds too little to pay a batch`,
      )
      throw LatchError.of('sponsor_out_of_funds')
    }
    // The row first, its hash once sent: an id another request of this user is sending under
    // waits for that one and is refused, before anything is sent.
    try {
      await trx
        .insertInto('sponsored_batches')
        .values({
          id: rowId,
          sponsor_id: sponsor.id,
          app_id: app.id,
          chain_id: chainId,
          user_id: userId,
          account,
          transaction_hash: '',
          calls: calls.length,
          cost_wei: cost.toString(),
          status: 'pending',
          receipt: null,
          created_at: now,
        })
        .execute()
    } catch (e) {
      if (isUniqueViolation(e)) throw duplicateId()
      throw e
    }
    const hash = await node(
      wallet.sendTransaction({
        to: account,
        data,
        gas,
        maxFeePerGas,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        nonce: sponsorNonce,
        ...(authorization && { authorizationList: [authorization] }),
      }),
    )
    await trx
      .updateTable('sponsored_batches')
      .set({ transaction_hash: hash })
      .where('id', '=', rowId)
      .execute()
    await eventInsert({
      appId: app.id,
      type: 'wallet.batch_sponsored',
      now,
      data: {
        id,
        userId,
        chainId,
        account,
        transactionHash: hash,
        calls: calls.length,
        delegated: authorization !== undefined,
      },
    }).execute(trx)
    return hash
  })
  deps.log(
    `[latch] sponsored batch ${id} of app ${app.id} on chain ${chainId}: ${calls.length} call(s), transaction ${transactionHash}`,
  )
  return { id }
}

/** A batch's status in EIP-5792's shape; only its user's. Reads the receipt while pending. */
export async function callsStatus(
  deps: Deps,
  app: AppRecord,
  userId: string,
  id: string,
): Promise<CallsStatus> {
  // Latch's own ids are the row's; a dapp's are hashed with the app and the user.
  const row = await deps.db
    .selectFrom('sponsored_batches')
    .selectAll()
    .where('id', 'in', [id, dappBatchKey(app.id, userId, id)])
    .where('app_id', '=', app.id)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  if (!row) throw LatchError.of('not_found', { message: 'No batch with this id' })
  const chainId = row.chain_id
  let status = row.status
  let receipt = row.receipt
    ? (JSON.parse(row.receipt) as NonNullable<CallsStatus['receipts']>[0])
    : null
  if (status === 'pending') {
    const { client } = access(deps, app, chainId)
    const found = await client
      .getTransactionReceipt({ hash: row.transaction_hash as Hex })
      .catch(() => null)
    if (found) {
      status = found.status === 'success' ? 'confirmed' : 'reverted'
      receipt = {
        logs: found.logs.map((l) => ({
          address: l.address,
          data: l.data,
          topics: l.topics as Hex[],
        })),
        status: found.status === 'success' ? '0x1' : '0x0',
        blockHash: found.blockHash,
        blockNumber: toHex(found.blockNumber),
        gasUsed: toHex(found.gasUsed),
        transactionHash: found.transactionHash,
      }
      await deps.db
        .updateTable('sponsored_batches')
        .set({
          status,
          receipt: JSON.stringify(receipt),
          // The budgets count what the batch did cost from now on.
          cost_wei: (found.gasUsed * found.effectiveGasPrice).toString(),
        })
        .where('id', '=', row.id)
        .where('status', '=', 'pending')
        .execute()
    }
  }
  return {
    version: '2.0.0',
    id,
    chainId: toHex(chainId),
    status: status === 'pending' ? 100 : status === 'confirmed' ? 200 : 500,
    atomic: true,
    ...(receipt && { receipts: [receipt] }),
  }
}

/** EIP-5792 capabilities of the app's chains: atomic batches, and where the app pays fees. */
export async function capabilities(
  deps: Deps,
  app: AppRecord,
): Promise<
  Record<Hex, { atomic: { status: 'supported' }; paymasterService?: { supported: true } }>
> {
  const out: Record<
    Hex,
    { atomic: { status: 'supported' }; paymasterService?: { supported: true } }
  > = {}
  for (const s of await listSponsors(deps, app.id)) {
    out[toHex(s.chainId)] = {
      atomic: { status: 'supported' },
      paymasterService: { supported: true },
    }
  }
  return out
}
