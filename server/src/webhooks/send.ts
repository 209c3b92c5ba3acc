/**
 * One webhook POST, made safe to aim at a URL an app chose: the host is resolved once, in
 * production every address it resolves to must be public (addresses.ts), and the connection
 * goes to the address that was checked (the socket's lookup answers it), so a DNS answer that
 * changes between the check and the connect cannot move the request into the private network.
 * No redirect is followed, the whole attempt has 10 s, and at most 64 KB of the answer is read.
 */

import { lookup as dnsLookup } from 'node:dns/promises'
import http from 'node:http'
import https from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import { BaseError } from '@latch/shared'
import { refusedAddress } from './addresses.ts'

export const SEND_TIMEOUT_MS = 10_000
export const MAX_RESPONSE_BYTES = 64 * 1024

export interface ResolvedAddress {
  address: string
  family: number
}

/** Host name to addresses (the system resolver; tests replace it). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>

export const systemResolver: Resolver = (hostname) =>
  dnsLookup(hostname, { all: true, verbatim: true })

export interface SendInput {
  url: string
  headers: Record<string, string>
  body: string
  /** Refuse addresses that are not public (NODE_ENV=production). */
  production: boolean
  resolve?: Resolver
  signal?: AbortSignal
  timeoutMs?: number
  /** Certificates to trust beside the system's (tests' own authority). */
  ca?: string | Buffer
}

export interface SendOutcome {
  /** The answer's status, or null when none came. */
  status: number | null
  /** Why the attempt failed before an answer (or was refused), for the delivery log. */
  error: string | null
  /** Seconds the answer's Retry-After asks for, when it names a number. */
  retryAfterS: number | null
  /** Bytes of the answer that were read (at most MAX_RESPONSE_BYTES). */
  bytesRead: number
  /** The address the connection went to. */
  address: string | null
}

/** A refusal before any connection: nothing was sent. */
export class RefusedDestination extends BaseError {
  override readonly name = 'RefusedDestination'
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out`)), ms)
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}

/** The address to connect to, checked; throws RefusedDestination when production refuses it. */
async function destination(
  hostname: string,
  production: boolean,
  resolve: Resolver,
  timeoutMs: number,
): Promise<ResolvedAddress> {
  const literal = hostname.replace(/^\[|\]$/g, '')
  const family = isIP(literal)
  let addresses: ResolvedAddress[]
  if (family !== 0) {
    addresses = [{ address: literal, family }]
  } else {
    try {
      addresses = await withTimeout(resolve(hostname), timeoutMs, 'DNS lookup')
    } catch (e) {
      throw new Error(`${hostname} did not resolve: ${(e as Error).message}`)
    }
  }
  const first = addresses[0]
  if (!first) throw new Error(`${hostname} did not resolve to any address`)
  if (production) {
    // Every address: a name with one public and one private answer is refused, not raced.
    for (const { address } of addresses) {
      const why = refusedAddress(address)
      if (why) throw new RefusedDestination(`${hostname} resolves to ${address}, which ${why}`)
    }
  }
  return first
}

export async function sendWebhook(input: SendInput): Promise<SendOutcome> {
  const timeoutMs = input.timeoutMs ?? SEND_TIMEOUT_MS
  const deadline = Date.now() + timeoutMs
  const none = { status: null, retryAfterS: null, bytesRead: 0 }
  const url = new URL(input.url)
  let target: ResolvedAddress
  try {
    target = await destination(
      url.hostname,
      input.production,
      input.resolve ?? systemResolver,
      timeoutMs,
    )
  } catch (e) {
    return { ...none, error: (e as Error).message, address: null }
  }
  // The socket asks this instead of the resolver: it connects to the address checked above.
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [target])
    else callback(null, target.address, target.family)
  }
  const client = url.protocol === 'https:' ? https : http
  return new Promise<SendOutcome>((resolve) => {
    let settled = false
    const finish = (outcome: Omit<SendOutcome, 'address'>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      input.signal?.removeEventListener('abort', onAbort)
      resolve({ ...outcome, address: target.address })
    }
    const req = client.request(url, {
      method: 'POST',
      headers: {
        ...input.headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(input.body)),
      },
      lookup: pinned,
      // The certificate is checked against the URL's host name (SNI too), not the address.
      ...(input.ca ? { ca: input.ca } : {}),
      // A fresh connection each time: a pooled socket would skip the check above.
      agent: false,
    })
    const timer = setTimeout(
      () => {
        finish({ ...none, error: `no answer within ${timeoutMs / 1000} s` })
        req.destroy()
      },
      Math.max(0, deadline - Date.now()),
    )
    const onAbort = () => {
      finish({ ...none, error: 'the server stopped' })
      req.destroy()
    }
    if (input.signal?.aborted) onAbort()
    input.signal?.addEventListener('abort', onAbort)
    req.on('error', (e) => finish({ ...none, error: e.message }))
    req.on('response', (res) => {
      const status = res.statusCode ?? 0
      const retry = Number(res.headers['retry-after'])
      const retryAfterS = Number.isFinite(retry) && retry >= 0 ? retry : null
      let bytesRead = 0
      const done = () => finish({ status, error: null, retryAfterS, bytesRead })
      res.on('data', (chunk: Buffer) => {
        bytesRead += chunk.length
        if (bytesRead >= MAX_RESPONSE_BYTES) {
          // Enough: the status is the answer; the rest is not read.
          bytesRead = MAX_RESPONSE_BYTES
          done()
          res.destroy()
        }
      })
      res.on('end', done)
      res.on('error', done)
      res.on('close', done)
    })
    req.end(input.body)
  })
}
