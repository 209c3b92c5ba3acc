/**
 * POST /chains/{chainId}/rpc: a JSON-RPC proxy to the app's node for that chain, so node URLs
 * (which carry the operator's API keys) never reach a browser and the modal's and the wallet
 * frame's CSP stay their own origin plus the API. Only the read and send methods the modal and
 * the frame need pass, for a signed-in user of the app, within rate limits per user, per client
 * address and per app. A 200 is JSON-RPC (the node's result or error with the caller's id, or
 * -32601 for a method Latch does not forward); anything else is the API's error body: a request
 * that is not JSON-RPC 400, a node that does not answer 502 rpc_internal, never a 500.
 */
import {
  CHAIN_RPC_METHODS,
  isSupportedChainId,
  type JsonRpcResponse,
  LatchError,
} from '@latch/shared'
import { Hono } from 'hono'
import { appChainIds } from '../apps/service.ts'
import type { Deps } from '../context.ts'
import { clientIp, type HonoEnv, requireAuth } from '../http.ts'
import { countEach, type Limit } from '../ratelimit.ts'
import { rpcUrlFor } from './rpc-urls.ts'

/** Calls per signed-in user: a send screen needs about ten, a receipt wait one a second. */
export const CHAIN_RPC_USER_LIMIT: Limit = { max: 300, windowMs: 60_000 }
/** Calls per client address (several users behind one address share it). */
export const CHAIN_RPC_IP_LIMIT: Limit = { max: 600, windowMs: 60_000 }
/** Calls per app from all its users: the operator's node budget. */
export const CHAIN_RPC_APP_LIMIT: Limit = { max: 30_000, windowMs: 60_000 }
/** How long the node may take to answer. */
export const CHAIN_RPC_TIMEOUT_MS = 10_000
/** The largest node answer passed on (a block with its transactions fits). */
export const CHAIN_RPC_MAX_ANSWER_BYTES = 2 * 1024 * 1024

const ALLOWED = new Set<string>(CHAIN_RPC_METHODS)

type RpcId = string | number | null

function rpcError(id: RpcId, code: number, message: string): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: { code, message } }
}

function invalid(message: string): LatchError {
  return LatchError.of('invalid_data', { message })
}

/** 502 with the API's error body; rpc_internal is JSON-RPC -32603 for an EIP-1193 caller. */
function nodeDown(message: string): LatchError {
  return LatchError.of('rpc_internal', { status: 502, message })
}

/** The node's answer as bytes, up to the cap; null when it is larger. */
async function readCapped(res: Response, cap: number): Promise<Uint8Array | null> {
  const reader = res.body?.getReader()
  if (!reader) return new Uint8Array()
  const parts: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > cap) {
      await reader.cancel()
      return null
    }
    parts.push(value)
  }
  return Buffer.concat(parts)
}

/**
 * fetch() refuses URLs with credentials in them, and a node behind basic auth is written
 * https://user:pass@host: the credentials move to the Authorization header.
 */
function nodeRequest(url: string): { url: string; headers: Record<string, string> } {
  const parsed = new URL(url)
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
  }
  if (parsed.username || parsed.password) {
    const user = decodeURIComponent(parsed.username)
    const pass = decodeURIComponent(parsed.password)
    headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`
    parsed.username = ''
    parsed.password = ''
  }
  return { url: parsed.toString(), headers }
}

/** Only what JSON-RPC defines of the node's answer, so nothing else of the node's leaks. */
function passOn(id: RpcId, body: unknown): JsonRpcResponse | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null
  const answer = body as Record<string, unknown>
  const error = answer.error
  if (typeof error === 'object' && error !== null) {
    const e = error as Record<string, unknown>
    const code = typeof e.code === 'number' && Number.isInteger(e.code) ? e.code : -32603
    const message = typeof e.message === 'string' ? e.message.slice(0, 2000) : 'Node error'
    return {
      jsonrpc: '2.0',
      id,
      error: { code, message, ...(e.data !== undefined && { data: e.data }) },
    }
  }
  if (!('result' in answer)) return null
  return { jsonrpc: '2.0', id, result: answer.result }
}

export function chainRoutes(deps: Deps): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()

  routes.post('/:chainId/rpc', requireAuth(deps), async (c) => {
    const raw = c.req.param('chainId')
    const chainId = /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : Number.NaN
    // The app's list (apps update --chains) before any node: a chain Latch knows but the app
    // did not choose is as unsupported as one it does not know.
    if (!isSupportedChainId(chainId, appChainIds(c.get('app')))) {
      throw LatchError.of('unsupported_chain')
    }
    const url = rpcUrlFor(deps.config, c.get('app'), chainId)

    const app = c.get('app').id
    const [user, ip, perApp] = await countEach(deps.db, deps.clock, [
      { key: `chain-rpc:user:${app}:${c.get('auth').sub}`, limit: CHAIN_RPC_USER_LIMIT },
      { key: `chain-rpc:ip:${clientIp(c, deps.config.trustProxy)}`, limit: CHAIN_RPC_IP_LIMIT },
      { key: `chain-rpc:app:${app}`, limit: CHAIN_RPC_APP_LIMIT },
    ])
    const over = [
      [user, CHAIN_RPC_USER_LIMIT],
      [ip, CHAIN_RPC_IP_LIMIT],
      [perApp, CHAIN_RPC_APP_LIMIT],
    ] as const
    for (const [seen, limit] of over) {
      if (seen && seen.count > limit.max) {
        throw LatchError.of('too_many_requests', { retryAfter: seen.retryAfterS })
      }
    }

    let request: unknown
    const text = await c.req.text()
    try {
      request = JSON.parse(text)
    } catch {
      throw invalid(text.trim() ? 'Request body is not valid JSON' : 'Request body is missing')
    }
    if (Array.isArray(request)) throw invalid('Batch JSON-RPC requests are not supported')
    if (typeof request !== 'object' || request === null) {
      throw invalid('Request body is not a JSON-RPC request')
    }
    const { id: rawId, method, params } = request as Record<string, unknown>
    const id: RpcId = typeof rawId === 'string' || typeof rawId === 'number' ? rawId : null
    if (typeof method !== 'string') throw invalid('Request body is not a JSON-RPC request')
    if (params !== undefined && !Array.isArray(params)) {
      throw invalid('JSON-RPC params must be a list')
    }
    if (!ALLOWED.has(method)) {
      return c.json(
        rpcError(id, -32601, `Method ${method.slice(0, 64)} is not available through Latch`),
        200,
      )
    }

    const node = nodeRequest(url)
    let res: Response
    try {
      res = await fetch(node.url, {
        method: 'POST',
        headers: node.headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: params ?? [] }),
        signal: AbortSignal.timeout(CHAIN_RPC_TIMEOUT_MS),
        redirect: 'error',
      })
    } catch (e) {
      const timedOut = e instanceof Error && e.name === 'TimeoutError'
      // The URL is not logged: it may carry the operator's API key.
      deps.log(`[latch] chain ${chainId} node unreachable: ${(e as Error)?.message ?? e}`)
      throw nodeDown(
        timedOut ? "The chain's node did not answer in time" : "The chain's node is unreachable",
      )
    }
    const bytes = await readCapped(res, CHAIN_RPC_MAX_ANSWER_BYTES).catch(() => undefined)
    if (bytes === null) {
      throw nodeDown("The chain's node answered too much")
    }
    let body: unknown
    try {
      body = bytes === undefined ? undefined : JSON.parse(new TextDecoder().decode(bytes))
    } catch {
      body = undefined
    }
    const answer = passOn(id, body)
    if (!answer) {
      deps.log(`[latch] chain ${chainId} node answered ${res.status} without a JSON-RPC answer`)
      throw nodeDown(`The chain's node answered ${res.status} without a JSON-RPC answer`)
    }
    // A node's own refusal (rate limit, bad request) still carries a JSON-RPC answer: passed on.
    return c.json(answer, 200)
  })

  return routes
}
