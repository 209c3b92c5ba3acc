/**
 * Which addresses a webhook may reach in production: none that is private, loopback,
 * link-local, unique-local, multicast or otherwise not a public unicast address, so an app's
 * endpoint URL cannot make the server call into its own network (SSRF).
 */
import { BlockList, isIP } from 'node:net'

const blocked = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services live here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4')
}
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routed by some)
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6')
}

/**
 * The 32-bit IPv4 address embedded in an IPv6 one (mapped, translated, compatible, NAT64,
 * 6to4), if any.
 */
function embeddedIpv4(address: string): string | null {
  const groups = expandIpv6(address)
  if (!groups) return null
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
  const zero = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0)
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated)
  if (zero(0, 5) && (groups[5] === 0xffff || groups[5] === 0)) {
    return v4(groups[6] ?? 0, groups[7] ?? 0)
  }
  // ::ffff:0:a.b.c.d (IPv4-translated, SIIT): a translator in the path hands it to the IPv4
  // address, so a private one there reaches the private network as surely as a mapped one.
  if (zero(0, 4) && groups[4] === 0xffff && groups[5] === 0) {
    return v4(groups[6] ?? 0, groups[7] ?? 0)
  }
  // 64:ff9b::a.b.c.d (NAT64 well-known prefix)
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(2, 6)) {
    return v4(groups[6] ?? 0, groups[7] ?? 0)
  }
  // 2002:AABB:CCDD::/48 (6to4)
  if (groups[0] === 0x2002) return v4(groups[1] ?? 0, groups[2] ?? 0)
  return null
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included). */
function expandIpv6(address: string): number[] | null {
  let text = address.toLowerCase()
  const zone = text.indexOf('%')
  if (zone >= 0) text = text.slice(0, zone)
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split('::') as [string, string | undefined]
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)))
  const first = parse(head)
  const last = tail === undefined ? [] : parse(tail)
  const missing = 8 - first.length - last.length
  if (tail === undefined ? missing !== 0 : missing < 0) return null
  const groups = [...first, ...Array<number>(missing).fill(0), ...last]
  return groups.some((g) => Number.isNaN(g)) ? null : groups
}

/** Why production refuses to send to this address, or null for a public unicast address. */
export function refusedAddress(address: string): string | null {
  const family = isIP(address)
  if (family === 0) return 'is not an IP address'
  if (family === 4) return blocked.check(address, 'ipv4') ? 'is not a public address' : null
  const v4 = embeddedIpv4(address)
  if (v4 !== null && blocked.check(v4, 'ipv4')) return 'is not a public address'
  return blocked.check(address, 'ipv6') ? 'is not a public address' : null
}

/** Loopback by name or address: where plain http is allowed outside production. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  if (host === 'localhost' || host.endsWith('.localhost')) return true
  if (isIP(host) === 4) return host.startsWith('127.')
  if (isIP(host) === 6) {
    const groups = expandIpv6(host) ?? []
    return groups.length === 8 && groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1
  }
  return false
}
