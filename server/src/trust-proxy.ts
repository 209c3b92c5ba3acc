/**
 * LATCH_TRUST_PROXY: whose X-Forwarded-For the server believes, and the client address it makes
 * of a request (rate limits key on it, ratelimit.ts's ipKey).
 */
import { BlockList, isIP } from 'node:net'

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
