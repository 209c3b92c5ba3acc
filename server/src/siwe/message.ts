/**
 * Reading and checking a Sign-In with Ethereum message (EIP-4361) without any state: strict
 * parsing, the app's origins, the statement, the times. The nonce and the signature are the
 * service's (service.ts); the threat model is in README.md.
 */
import { SIWE_STATEMENT } from '@latch/shared'
import { createSiweMessage, parseSiweMessage, type SiweMessage } from 'viem/siwe'

/** How far a visitor's clock may run ahead of the server's (issuedAt, notBefore). */
export const SIWE_CLOCK_SKEW_MS = 5 * 60_000

/** Why a message was refused; the log names it, the visitor sees 'Could not log in with wallet'. */
export type SiweRefusal =
  | 'malformed'
  | 'domain'
  | 'uri'
  | 'scheme'
  | 'statement'
  | 'chain'
  | 'issued_in_future'
  | 'issued_before_nonce'
  | 'expired'
  | 'not_yet_valid'
  | 'signature'
  | 'rpc_unavailable'

const DATE_LINE = /^(Issued At|Expiration Time|Not Before): (.*)$/gm
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

/**
 * The message's fields, or null unless it is exactly the EIP-4361 text of those fields:
 * viem's parser is lenient (it finds its fields anywhere, ignores what follows), so the parsed
 * fields are written back with viem's builder, which also checks each field (EIP-55 address,
 * RFC 3986 domain and URI, version 1, alphanumeric nonce), and the two texts must agree. Only
 * the timestamps may be written differently (any RFC 3339 form of the same instant).
 */
export function readSiweMessage(message: string): SiweMessage | null {
  let dateOk = true
  const normalized = message.replace(DATE_LINE, (_, name: string, value: string) => {
    const at = new Date(value)
    if (!RFC3339.test(value) || Number.isNaN(at.getTime())) {
      dateOk = false
      return `${name}: ${value}`
    }
    return `${name}: ${at.toISOString()}`
  })
  if (!dateOk) return null
  const fields = parseSiweMessage(message)
  const { address, chainId, domain, nonce, uri, version } = fields
  if (!address || chainId === undefined || !domain || !nonce || !uri || version !== '1') {
    return null
  }
  // EIP-4361 requires Issued At; the library's builder would fill in the current time.
  if (!fields.issuedAt) return null
  const parsed: SiweMessage = { ...fields, address, chainId, domain, nonce, uri, version }
  try {
    if (createSiweMessage(parsed) !== normalized) return null
  } catch {
    return null
  }
  return parsed
}

/** The app's registered origin the message names (domain, URI and scheme agree), else why not. */
export function checkOrigin(
  msg: SiweMessage,
  allowedOrigins: readonly string[],
): { ok: true; origin: string } | { ok: false; refusal: SiweRefusal } {
  const origins = allowedOrigins.flatMap((o) => (URL.canParse(o) ? [new URL(o)] : []))
  // EIP-4361's domain is the page's authority (host and port, no scheme): the page the
  // visitor sees, where the wallet shows it.
  const matching = origins.filter((o) => o.host === msg.domain.toLowerCase())
  if (matching.length === 0) return { ok: false, refusal: 'domain' }
  if (msg.scheme !== undefined && !matching.some((o) => o.protocol === `${msg.scheme}:`)) {
    return { ok: false, refusal: 'scheme' }
  }
  if (!URL.canParse(msg.uri)) return { ok: false, refusal: 'uri' }
  const uri = new URL(msg.uri)
  const origin = matching.find(
    (o) => o.origin === uri.origin && (msg.scheme === undefined || o.protocol === `${msg.scheme}:`),
  )
  return origin ? { ok: true, origin: origin.origin } : { ok: false, refusal: 'uri' }
}

/**
 * The statement and the times: issuedAt neither ahead of now (beyond the skew) nor before the
 * nonce was issued, notBefore reached, expirationTime not reached.
 */
export function checkTerms(msg: SiweMessage, now: Date, nonceIssuedAt: Date): SiweRefusal | null {
  if (msg.statement !== SIWE_STATEMENT) return 'statement'
  const t = now.getTime()
  const issued = msg.issuedAt?.getTime()
  if (issued === undefined) return 'malformed'
  if (issued > t + SIWE_CLOCK_SKEW_MS) return 'issued_in_future'
  if (issued < nonceIssuedAt.getTime() - SIWE_CLOCK_SKEW_MS) return 'issued_before_nonce'
  if (msg.expirationTime && t >= msg.expirationTime.getTime()) return 'expired'
  if (msg.notBefore && t + SIWE_CLOCK_SKEW_MS < msg.notBefore.getTime()) return 'not_yet_valid'
  return null
}
