/**
 * An app's sponsors: per app and chain, the account that pays for its users' batches, and the
 * policy of what it pays for. The key is made here, sealed under the server secret for its own
 * row (`sponsor-key:<id>`, so a sealed key copied to another row does not open) and opened only
 * to sign the sponsor's own transactions; `latch secret rotate` seals it again. The row carries
 * a MAC of its app, chain, address and policy: a database writer without the secret who widens
 * a policy (or points a row at another app) makes a sponsor that pays for nothing.
 */
import { getChain, LatchError } from '@latch/shared'
import { sql } from 'kysely'
import { getAddress, type Hex, isAddress } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import type { Deps } from '../context.ts'
import { randomId } from '../crypto.ts'
import type { Db } from '../db/index.ts'
import type { SponsorsTable } from '../db/schema.ts'
import { rowMac, rowMacHolds } from '../row-mac.ts'

/** What a sponsor pays for. Amounts of wei are decimal text (they outgrow a JS number). */
export interface SponsorPolicy {
  /**
   * The contracts it pays calls to (lowercase address), each with the function selectors it
   * pays for ('0x' and 8 hex digits), or ['*'] for any function of that contract.
   */
  contracts: Record<string, string[]>
  /** The most gas one batch may be given. */
  gasCapPerBatch: number
  /** The most wei it spends on one user's batches per UTC day. */
  userDailyWei: string
  /** The most wei it spends on the app's batches per UTC day. */
  appDailyWei: string
}

/** A new sponsor pays for nothing until the operator lists contracts. */
export const DEFAULT_POLICY: SponsorPolicy = {
  contracts: {},
  gasCapPerBatch: 1_000_000,
  userDailyWei: (10n ** 16n).toString(), // 0.01 ETH
  appDailyWei: (10n ** 18n).toString(), // 1 ETH
}

/** A change of policy: contracts listed replace that contract's entry; [] removes it. */
export interface PolicyPatch {
  contracts?: Record<string, string[]>
  gasCapPerBatch?: number
  userDailyWei?: string
  appDailyWei?: string
}

export interface Sponsor {
  id: string
  appId: string
  chainId: number
  address: Hex
  policy: SponsorPolicy
}

const SELECTOR = /^0x[0-9a-f]{8}$/
const WEI = /^[0-9]{1,78}$/
const MAX_GAS_CAP = 30_000_000

const invalid = (message: string) =>
  LatchError.of('invalid_data', { message: `Invalid sponsor policy: ${message}` })

/** The policy after `patch`, checked; throws invalid_data naming what is wrong. */
export function applyPolicy(current: SponsorPolicy, patch: PolicyPatch): SponsorPolicy {
  const next: SponsorPolicy = { ...current, contracts: { ...current.contracts } }
  if (patch.contracts !== undefined) {
    if (typeof patch.contracts !== 'object' || patch.contracts === null) {
      throw invalid('contracts takes { "<address>": ["<selector>", ...] }')
    }
    for (const [address, selectors] of Object.entries(patch.contracts)) {
      if (!isAddress(address, { strict: false })) throw invalid(`'${address}' is not an address`)
      if (!Array.isArray(selectors)) throw invalid(`the selectors of ${address} are not a list`)
      const key = address.toLowerCase()
      if (selectors.length === 0) {
        delete next.contracts[key]
        continue
      }
      const list = selectors.map((s) => String(s).toLowerCase())
      const bad = list.find((s) => s !== '*' && !SELECTOR.test(s))
      if (bad !== undefined) throw invalid(`'${bad}' is not a function selector (0x and 8 hex)`)
      if (list.includes('*') && list.length > 1) throw invalid(`'*' stands alone (${address})`)
      next.contracts[key] = [...new Set(list)].sort()
    }
  }
  if (patch.gasCapPerBatch !== undefined) {
    const cap = patch.gasCapPerBatch
    if (!Number.isInteger(cap) || cap < 21_000 || cap > MAX_GAS_CAP) {
      throw invalid(`gasCapPerBatch takes a whole number from 21000 to ${MAX_GAS_CAP}`)
    }
    next.gasCapPerBatch = cap
  }
  for (const field of ['userDailyWei', 'appDailyWei'] as const) {
    const value = patch[field]
    if (value === undefined) continue
    if (typeof value !== 'string' || !WEI.test(value)) {
      throw invalid(`${field} takes wei as decimal digits`)
    }
    next[field] = BigInt(value).toString()
  }
  return next
}

/** The policy's canonical JSON text (what the row stores and its MAC covers). */
export function policyText(policy: SponsorPolicy): string {
  const contracts = Object.fromEntries(
    Object.keys(policy.contracts)
      .sort()
      .map((k) => [k, policy.contracts[k]]),
  )
  return JSON.stringify({
    contracts,
    gasCapPerBatch: policy.gasCapPerBatch,
    userDailyWei: policy.userDailyWei,
    appDailyWei: policy.appDailyWei,
  })
}

const keyAad = (id: string) => `sponsor-key:${id}`

type Row = Pick<SponsorsTable, 'id' | 'app_id' | 'chain_id' | 'address' | 'policy' | 'mac'>

function macOf(deps: Pick<Deps, 'secrets'>, row: Omit<Row, 'mac'>): string {
  return rowMac(deps.secrets, 'sponsor', {
    id: row.id,
    app_id: row.app_id,
    chain_id: row.chain_id,
    address: row.address,
    policy: row.policy,
  })
}

/** The row as a sponsor, or null when its MAC does not hold (logged). */
function sponsorOf(deps: Pick<Deps, 'secrets' | 'log'>, row: Row): Sponsor | null {
  const fields = {
    id: row.id,
    app_id: row.app_id,
    chain_id: row.chain_id,
    address: row.address,
    policy: row.policy,
  }
  if (!rowMacHolds(deps, 'sponsor', fields, row.mac, `${row.app_id}/${row.chain_id}`)) return null
  return {
    id: row.id,
    appId: row.app_id,
    chainId: row.chain_id,
    address: row.address as Hex,
    policy: JSON.parse(row.policy) as SponsorPolicy,
  }
}

const COLUMNS = ['id', 'app_id', 'chain_id', 'address', 'policy', 'mac'] as const

/** The app's sponsor on a chain, or null (none, or a row whose MAC does not hold). */
export async function findSponsor(
  deps: Pick<Deps, 'db' | 'secrets' | 'log'>,
  appId: string,
  chainId: number,
  db: Db = deps.db,
): Promise<Sponsor | null> {
  const row = await db
    .selectFrom('sponsors')
    .select(COLUMNS)
    .where('app_id', '=', appId)
    .where('chain_id', '=', chainId)
    .executeTakeFirst()
  return row ? sponsorOf(deps, row) : null
}

/** The app's sponsors, by chain. */
export async function listSponsors(
  deps: Pick<Deps, 'db' | 'secrets' | 'log'>,
  appId: string,
): Promise<Sponsor[]> {
  const rows = await deps.db
    .selectFrom('sponsors')
    .select(COLUMNS)
    .where('app_id', '=', appId)
    .orderBy('chain_id')
    .execute()
  return rows.map((r) => sponsorOf(deps, r)).filter((s): s is Sponsor => s !== null)
}

/**
 * Makes the app's sponsor on a chain: a new key, sealed; the policy pays for nothing until set.
 * Refused when the app already has one there (its address is what the operator funded).
 */
export async function createSponsor(
  deps: Pick<Deps, 'db' | 'secrets' | 'log' | 'clock'>,
  appId: string,
  chainId: number,
): Promise<Sponsor> {
  if (!getChain(chainId)) throw LatchError.of('unsupported_chain')
  if (await findSponsor(deps, appId, chainId)) {
    throw LatchError.of('invalid_data', {
      status: 409,
      message: `App ${appId} already has a sponsor on chain ${chainId}`,
    })
  }
  const key = generatePrivateKey()
  const id = `spn_${randomId(24)}`
  const row = {
    id,
    app_id: appId,
    chain_id: chainId,
    address: getAddress(privateKeyToAccount(key).address),
    policy: policyText(DEFAULT_POLICY),
  }
  const now = deps.clock.now()
  await deps.db
    .insertInto('sponsors')
    .values({
      ...row,
      private_sealed: deps.secrets.encrypt(key, keyAad(id)),
      mac: macOf(deps, row),
      created_at: now,
      updated_at: now,
    })
    .execute()
  return { id, appId, chainId, address: row.address as Hex, policy: DEFAULT_POLICY }
}

/** Changes the policy of the app's sponsor on a chain. */
export async function updatePolicy(
  deps: Pick<Deps, 'db' | 'secrets' | 'log' | 'clock'>,
  appId: string,
  chainId: number,
  patch: PolicyPatch,
): Promise<Sponsor> {
  const sponsor = await findSponsor(deps, appId, chainId)
  if (!sponsor) {
    throw LatchError.of('not_found', {
      message: `App ${appId} has no sponsor on chain ${chainId}`,
    })
  }
  const policy = applyPolicy(sponsor.policy, patch)
  const text = policyText(policy)
  const row = { id: sponsor.id, app_id: appId, chain_id: chainId, address: sponsor.address }
  await deps.db
    .updateTable('sponsors')
    .set({ policy: text, mac: macOf(deps, { ...row, policy: text }), updated_at: deps.clock.now() })
    .where('id', '=', sponsor.id)
    .execute()
  return { ...sponsor, policy }
}

/** The sponsor's private key, opened to sign its own transaction. */
export async function sponsorKey(deps: Pick<Deps, 'db' | 'secrets'>, id: string): Promise<Hex> {
  const row = await deps.db
    .selectFrom('sponsors')
    .select('private_sealed')
    .where('id', '=', id)
    .executeTakeFirstOrThrow()
  return deps.secrets.decrypt(row.private_sealed, keyAad(id)) as Hex
}

/** Start of the UTC day of `now`: the budgets' window. */
export function dayStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()))
}

/** Wei the sponsor has spent (or holds for pending batches) today, all users and this user's. */
export async function spentToday(
  db: Db,
  sponsorId: string,
  userId: string,
  now: Date,
): Promise<{ app: bigint; user: bigint }> {
  const row = await db
    .selectFrom('sponsored_batches')
    .select([
      sql<string | null>`sum(cost_wei)`.as('app'),
      sql<string | null>`sum(cost_wei) filter (where user_id = ${userId})`.as('user'),
    ])
    .where('sponsor_id', '=', sponsorId)
    .where('created_at', '>=', dayStart(now))
    .executeTakeFirst()
  const app = BigInt(row?.app ?? '0')
  const user = BigInt(row?.user ?? '0')
  return { app, user }
}

/** Wei the sponsor has spent (or holds for pending batches) today, all users together. */
export async function spentTodayOfApp(db: Db, sponsorId: string, now: Date): Promise<bigint> {
  return (await spentToday(db, sponsorId, '', now)).app
}
