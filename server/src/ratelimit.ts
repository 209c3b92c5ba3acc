/**
 * Fixed-window counters in the database, so every server process shares them, and the client
 * address they are keyed by.
 */
import { BlockList, isIP } from 'node:net'
import { LatchError } from '@latch/shared'
import { sql } from 'kysely'
import type { Clock } from './context.ts'
import type { Db } from './db/index.ts'

export interface Limit {
  max: number
  windowMs: number
}

export interface Count {
  /** Hits in the current window, this one included. */
  count: number
  /** Seconds until the window ends (at least 1). */
  retryAfterS: number
}

/**
 * Counts one hit on `key` and answers the window's count, without judging it. The count and
 * the window roll-over are one atomic statement, so parallel hits never lose one.
 */
export async function count(db: Db, clock: Clock, key: string, limit: Limit): Promise<Count> {
  const [counted] = await countEach(db, clock, [{ key, limit }])
  return counted as Count
}

/**
 * Counts one hit on each key, with its own window, in one statement (one round trip for the
 * several budgets a request spends), and answers the counts in the order given. Keys must
 * differ. Rows are locked in key order, so two requests sharing keys never wait on each other
 * in a cycle.
 */
export async function countEach(
  db: Db,
  clock: Clock,
  hits: readonly { key: string; limit: Limit }[],
): Promise<Count[]> {
  const now = clock.now()
  const sorted = [...hits].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  // Each row carries its window as expires_at - window_start of the values it would insert, so
  // one statement serves keys with different windows.
  const window = sql`(excluded.expires_at - excluded.window_start)`
  const stale = sql`rate_limits.window_start <= excluded.window_start - ${window}`
  const rows = await db
    .insertInto('rate_limits')
    .values(
      sorted.map(({ key, limit }) => ({
        key,
        window_start: now,
        count: 1,
        expires_at: new Date(now.getTime() + limit.windowMs),
      })),
    )
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        count: sql<number>`CASE WHEN ${stale} THEN 1 ELSE rate_limits.count + 1 END`,
        window_start: sql<Date>`CASE WHEN ${stale} THEN excluded.window_start ELSE rate_limits.window_start END`,
        expires_at: sql<Date>`CASE WHEN ${stale} THEN excluded.expires_at ELSE rate_limits.window_start + ${window} END`,
      }),
    )
    .returning(['key', 'count', 'window_start'])
    .execute()
  const byKey = new Map(rows.map((r) => [r.key, r]))
  return hits.map(({ key, limit }) => {
    const row = byKey.get(key)
    if (!row) throw new Error(`no rate-limit row for ${key}`)
    return { count: row.count, retryAfterS: secondsLeft(row.window_start, limit, now) }
  })
}

/** The window's count without adding to it (0 when the window is over or never began). */
export async function peek(db: Db, clock: Clock, key: string, limit: Limit): Promise<Count> {
  const now = clock.now()
  const row = await db
    .selectFrom('rate_limits')
    .select(['count', 'window_start'])
    .where('key', '=', key)
    .where('window_start', '>', new Date(now.getTime() - limit.windowMs))
    .executeTakeFirst()
  return row
    ? { count: row.count, retryAfterS: secondsLeft(row.window_start, limit, now) }
    : { count: 0, retryAfterS: 1 }
}

/** Takes back one hit counted on `key` (a reserved try that turned out to be allowed). */
export async function refund(db: Db, key: string): Promise<void> {
  await db
    .updateTable('rate_limits')
    .set({ count: sql<number>`count - 1` })
    .where('key', '=', key)
    .where('count', '>', 0)
    .execute()
}

function secondsLeft(windowStart: Date, limit: Limit, now: Date): number {
  return Math.max(1, Math.ceil((windowStart.getTime() + limit.windowMs - now.getTime()) / 1000))
}

/**
 * Counts one hit on `key` and throws too_many_requests (429, with the seconds to wait) when
 * the window already holds `max`; `error` replaces the generic 429 with a more telling one.
 */
export async function hit(
  db: Db,
  clock: Clock,
  key: string,
  limit: Limit,
  error: (retryAfterS: number) => LatchError = tooManyRequests,
): Promise<void> {
  const seen = await count(db, clock, key, limit)
  if (seen.count > limit.max) throw error(seen.retryAfterS)
}

/** A 429 carrying its Retry-After in seconds. */
export function tooManyRequests(retryAfterS: number): LatchError {
  return LatchError.of('too_many_requests', { retryAfter: retryAfterS })
}

/**
 * Whom X-Forwarded-For is believed from: nobody, the last `hops` proxies in front of the server,
 * or the proxies at the given addresses and subnets.
 */
export type TrustProxy =
  | { kind: 'none' }
  | { kind: 'hops'; hops: number }
  | { kind: 'addresses'; addresses: readonly string[] }

export const TRUST_NONE: TrustProxy = { kind: 'none' }

/**
 * Reads LATCH_TRUST_PROXY: empty, `0`, `false` or `off` for none; a number of hops (`true`
 * is one, as it always was); or a comma-separated list of proxy addresses and CIDR subnets.
 * Throws an Error naming the entry it cannot read.
 */
export function parseTrustProxy(raw: string | undefined): TrustProxy {
  const value = raw?.trim().toLowerCase() ?? ''
  if (value === '' || value === '0' || value === 'false' || value === 'off') return TRUST_NONE
  if (value === 'true') return { kind: 'hops', hops: 1 }
  if (/^\d+$/.test(value)) {
    const hops = Number(value)
    if (hops > 32) throw new Error(`at most 32 hops, got ${hops}`)
    return { kind: 'hops', hops }
  }
  const addresses = value
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean)
  for (const entry of addresses) trustedBlock(entry) // throws on a bad entry
  return { kind: 'addresses', addresses }
}

/** One trusted entry (an address or a subnet) as a BlockList; throws when it is neither. */
function trustedBlock(entry: string, into = new BlockList()): BlockList {
  const [address = '', prefix, extra] = entry.split('/')
  const type = isIP(address)
  if (type === 0 || extra !== undefined)
    throw new Error(`'${entry}' is not an IP address or subnet`)
  const family = type === 4 ? 'ipv4' : 'ipv6'
  if (prefix === undefined) {
    into.addAddress(address, family)
  } else {
    const bits = Number(prefix)
    if (!/^\d+$/.test(prefix) || bits > (type === 4 ? 32 : 128)) {
      throw new Error(`'${entry}' has no valid prefix length`)
    }
    into.addSubnet(address, bits, family)
  }
  return into
}

const trustedLists = new WeakMap<readonly string[], BlockList>()
function trustedList(addresses: readonly string[]): BlockList {
  let list = trustedLists.get(addresses)
  if (!list) {
    list = new BlockList()
    for (const a of addresses) trustedBlock(a, list)
    trustedLists.set(addresses, list)
  }
  return list
}

/** An address as the connection or a proxy wrote it, bare ('[::1]:80', '1.2.3.4:5' -> address). */
function bareAddress(raw: string): string {
  let a = raw.trim()
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(a)
  if (bracketed?.[1]) a = bracketed[1]
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(a)) a = a.slice(0, a.lastIndexOf(':'))
  // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d; it is the IPv4 address.
  const mapped = /^::ffff:(\d{1,3}(\.\d{1,3}){3})$/i.exec(a)
  if (mapped?.[1]) a = mapped[1]
  return a
}

function isTrusted(list: BlockList, address: string): boolean {
  const type = isIP(address)
  return type !== 0 && list.check(address, type === 4 ? 'ipv4' : 'ipv6')
}

/**
 * Whether the connection comes from a proxy LATCH_TRUST_PROXY trusts (with a number of hops,
 * the peer is that proxy by configuration): what such a proxy adds to a request is believed.
 */
export function peerIsTrusted(socket: string, trust: TrustProxy): boolean {
  if (trust.kind === 'none') return false
  if (trust.kind === 'hops') return trust.hops > 0
  return isTrusted(trustedList(trust.addresses), bareAddress(socket))
}

/**
 * The client's address: the socket's peer, or, behind trusted proxies, the address the
 * outermost trusted proxy saw. Only entries appended by trusted proxies are believed: the
 * client writes whatever it likes to the left of them. With `hops`, the entry `hops` places
 * from the right (the leftmost when the header is shorter); with addresses, walking from the
 * socket leftwards, the first address that is not a trusted proxy.
 */
export function clientAddress(
  socket: string,
  forwardedFor: string | undefined,
  trust: TrustProxy,
): string {
  const peer = bareAddress(socket)
  if (trust.kind === 'none' || !forwardedFor) return peer
  const chain = forwardedFor
    .split(',')
    .map(bareAddress)
    .filter((a) => a !== '')
  if (chain.length === 0) return peer
  let chosen: string
  if (trust.kind === 'hops') {
    if (trust.hops === 0) return peer
    chosen = chain[Math.max(0, chain.length - trust.hops)] ?? peer
  } else {
    const list = trustedList(trust.addresses)
    if (!isTrusted(list, peer)) return peer
    chosen = chain[0] ?? peer
    for (let i = chain.length - 1; i >= 0; i--) {
      const entry = chain[i] ?? ''
      if (!isTrusted(list, entry)) {
        chosen = entry
        break
      }
    }
  }
  // A trusted proxy writes addresses; anything else means a misconfigured chain, and then the
  // proxy's own address is the stricter key (everyone behind it shares one budget).
  return isIP(chosen) === 0 ? peer : chosen
}

/**
 * The rate-limit key of an address: IPv4 as is, IPv6 as its /64 prefix, since one subscriber
 * commonly holds a whole /64 and could otherwise rotate through 2^64 addresses.
 */
export function ipKey(address: string): string {
  if (isIP(address) !== 6) return address
  const groups = expandIpv6(address)
  if (!groups) return address
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`
}

/** The eight 16-bit groups of an IPv6 address, or undefined when it does not parse. */
function expandIpv6(address: string): number[] | undefined {
  let text = address.toLowerCase().split('%')[0] ?? ''
  // A trailing dotted IPv4 part (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) is two groups.
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text)
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const parse = (part: string | undefined) =>
    part ? part.split(':').map((g) => Number.parseInt(g, 16)) : []
  const head = parse(halves[0])
  const tail = parse(halves[1])
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0
  const groups = [...head, ...new Array<number>(fill).fill(0), ...tail]
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) {
    return undefined
  }
  return groups
}
