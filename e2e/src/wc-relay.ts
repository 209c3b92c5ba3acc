/**
 * A WalletConnect relay on 127.0.0.1 for the end-to-end tests: a WebSocket server speaking
 * the relay's JSON-RPC as the current clients use it, so the modal's WalletConnect provider
 * and the wallet's sign client (wc-wallet.ts) meet here instead of on WalletConnect's network.
 *
 * - A client connects with its relay auth JWT in the query (`?auth=…`, an Ed25519-signed
 *   did:key JWT the client makes itself); one missing, badly signed or expired is refused
 *   with 401 before the WebSocket opens.
 * - irn_subscribe / irn_batchSubscribe answer subscription ids and deliver what the topic
 *   already holds (a message published before its reader subscribed waits for it, as the
 *   real relay's mailbox does); irn_unsubscribe / irn_batchUnsubscribe end them.
 * - irn_publish / irn_batchPublish keep the message for its ttl and deliver it at once to the
 *   topic's other subscribers as irn_subscription, which each client acknowledges.
 * - irn_batchFetchMessages answers what the topics hold that this client has not received.
 * - wc_proposeSession and wc_approveSession (the sign client's one-trip pairing) publish the
 *   proposal on the pairing topic, and the proposal's answer and the session settlement on the
 *   pairing and the session topic; each subscribes its sender to the topic it expects an answer
 *   on (the sign client skips that subscription itself).
 * Anything else is answered with JSON-RPC -32601; bad params with -32602.
 */
import { createHash } from 'node:crypto'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import { verifyJWT } from '@walletconnect/relay-auth'
import { afterAll, beforeAll } from 'vitest'
import { type WebSocket, WebSocketServer } from 'ws'

/** Tags the sign client gives its messages (e.g. 1100: session proposal); kept for tests. */
export interface RelayedMessage {
  method: string
  topic: string
  tag: number | null
}

export interface LocalRelay {
  /** ws://127.0.0.1:PORT, the relay URL to give the modal server and the wallet. */
  url: string
  /** Every message published, in order. */
  published: RelayedMessage[]
  /** Connections refused for their auth JWT. */
  refused: number
  close(): Promise<void>
}

interface Stored {
  topic: string
  message: string
  publishedAt: number
  expiresAt: number
  tag: number | null
  attestation: unknown
}

interface Client {
  socket: WebSocket
  /** The did:key the client signs its JWT with: its identity across reconnects. */
  id: string
  /** subscription id → topic. */
  subscriptions: Map<string, string>
  /** Messages this client has been given, so a fetch or a resubscribe does not repeat them. */
  received: Set<Stored>
}

const TOPIC = /^[0-9a-f]{64}$/
/** Messages a topic keeps at most: enough for any test, and no unbounded growth. */
const TOPIC_LIMIT = 200
const DEFAULT_TTL_S = 300

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message)
  }
}

const record = (v: unknown): Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new RpcError(-32602, 'params must be an object')
  }
  return v as Record<string, unknown>
}

const topicOf = (v: unknown): string => {
  if (typeof v !== 'string' || !TOPIC.test(v)) throw new RpcError(-32602, 'invalid topic')
  return v
}

const stringOf = (v: unknown, name: string): string => {
  if (typeof v !== 'string' || v.length === 0) throw new RpcError(-32602, `invalid ${name}`)
  return v
}

const listOf = (v: unknown, name: string): unknown[] => {
  if (!Array.isArray(v)) throw new RpcError(-32602, `${name} must be a list`)
  return v
}

/** The JWT's issuer, after checking its signature and expiry; null when it does not pass. */
async function authenticate(req: IncomingMessage): Promise<string | null> {
  const auth = new URL(req.url ?? '/', 'http://relay').searchParams.get('auth')
  if (!auth) return null
  try {
    if (!(await verifyJWT(auth))) return null
    const payload: unknown = JSON.parse(
      Buffer.from(auth.split('.')[1] ?? '', 'base64url').toString('utf8'),
    )
    const { iss, exp } = record(payload)
    if (typeof iss !== 'string' || !iss.startsWith('did:key:')) return null
    if (typeof exp !== 'number' || exp * 1000 < Date.now()) return null
    return iss
  } catch {
    return null
  }
}

export async function startLocalRelay(): Promise<LocalRelay> {
  const topics = new Map<string, Stored[]>()
  const clients = new Set<Client>()
  const published: RelayedMessage[] = []
  let refused = 0
  let nextId = Date.now() * 1000

  const send = (client: Client, payload: unknown) => {
    if (client.socket.readyState === client.socket.OPEN) client.socket.send(JSON.stringify(payload))
  }

  const deliver = (client: Client, subscriptionId: string, stored: Stored) => {
    if (client.received.has(stored)) return
    client.received.add(stored)
    if (process.env.WC_RELAY_DEBUG)
      console.log('relay >', client.id.slice(-6), stored.topic.slice(0, 8), stored.tag)
    send(client, {
      id: nextId++,
      jsonrpc: '2.0',
      method: 'irn_subscription',
      params: {
        id: subscriptionId,
        data: {
          topic: stored.topic,
          message: stored.message,
          publishedAt: stored.publishedAt,
          // Passed on as given, '' included: the sign client resolves a missing one online.
          attestation: stored.attestation,
          tag: stored.tag,
        },
      },
    })
  }

  const held = (topic: string): Stored[] => {
    const now = Date.now()
    const live = (topics.get(topic) ?? []).filter((s) => s.expiresAt > now)
    topics.set(topic, live)
    return live
  }

  const publish = (
    from: Client,
    method: string,
    topic: string,
    message: string,
    params: Record<string, unknown>,
  ) => {
    const ttl = typeof params.ttl === 'number' && params.ttl > 0 ? params.ttl : DEFAULT_TTL_S
    const tag = typeof params.tag === 'number' ? params.tag : null
    const now = Date.now()
    const stored: Stored = {
      topic,
      message,
      publishedAt: now,
      expiresAt: now + ttl * 1000,
      tag,
      attestation: params.attestation,
    }
    // The publisher has it: it never comes back to the client that sent it.
    from.received.add(stored)
    const list = held(topic)
    list.push(stored)
    if (list.length > TOPIC_LIMIT) list.splice(0, list.length - TOPIC_LIMIT)
    published.push({ method, topic, tag })
    for (const client of clients) {
      for (const [id, subscribed] of client.subscriptions) {
        if (subscribed === topic) deliver(client, id, stored)
      }
    }
  }

  const subscribe = (client: Client, topic: string): string => {
    // The id the client computes itself (sha256 of topic and client id): a subscription the
    // relay makes on its behalf (below) is one it recognises.
    const id = createHash('sha256')
      .update(topic + client.id)
      .digest('hex')
    if (client.subscriptions.has(id)) return id
    client.subscriptions.set(id, topic)
    // After the answer: the client knows the subscription before its first message.
    setImmediate(() => {
      for (const stored of held(topic)) deliver(client, id, stored)
    })
    return id
  }

  const unsubscribe = (client: Client, params: Record<string, unknown>) => {
    const topic = topicOf(params.topic)
    for (const [id, subscribed] of client.subscriptions) {
      if (subscribed === topic && (params.id === undefined || params.id === id)) {
        client.subscriptions.delete(id)
      }
    }
  }

  const handle = (client: Client, method: string, raw: unknown): unknown => {
    switch (method) {
      case 'irn_subscribe':
        return subscribe(client, topicOf(record(raw).topic))
      case 'irn_batchSubscribe':
        return listOf(record(raw).topics, 'topics').map((t) => subscribe(client, topicOf(t)))
      case 'irn_unsubscribe':
        unsubscribe(client, record(raw))
        return true
      case 'irn_batchUnsubscribe':
        for (const s of listOf(record(raw).subscriptions, 'subscriptions')) {
          unsubscribe(client, record(s))
        }
        return true
      case 'irn_publish': {
        const params = record(raw)
        publish(client, method, topicOf(params.topic), stringOf(params.message, 'message'), params)
        return true
      }
      case 'irn_batchPublish': {
        for (const m of listOf(record(raw).messages, 'messages')) {
          const params = record(m)
          publish(
            client,
            method,
            topicOf(params.topic),
            stringOf(params.message, 'message'),
            params,
          )
        }
        return true
      }
      case 'irn_batchFetchMessages': {
        const wanted = listOf(record(raw).topics, 'topics').map(topicOf)
        const messages = wanted.flatMap((topic) =>
          held(topic)
            .filter((s) => !client.received.has(s))
            .map((s) => {
              client.received.add(s)
              return {
                topic: s.topic,
                message: s.message,
                publishedAt: s.publishedAt,
                attestation: s.attestation,
                tag: s.tag,
              }
            }),
        )
        return { messages, hasMore: false }
      }
      case 'wc_proposeSession': {
        const params = record(raw)
        const pairingTopic = topicOf(params.pairingTopic)
        const proposal = stringOf(params.sessionProposal, 'sessionProposal')
        // The proposer does not subscribe to the pairing topic itself: the relay does it for
        // it, so the wallet's answer reaches it.
        subscribe(client, pairingTopic)
        publish(client, method, pairingTopic, proposal, { ...params, tag: 1100 })
        return true
      }
      case 'wc_approveSession': {
        const params = record(raw)
        const pairingTopic = topicOf(params.pairingTopic)
        const sessionTopic = topicOf(params.sessionTopic)
        const response = stringOf(params.sessionProposalResponse, 'sessionProposalResponse')
        const settle = stringOf(params.sessionSettlementRequest, 'sessionSettlementRequest')
        // Likewise the wallet to the new session's topic.
        subscribe(client, sessionTopic)
        publish(client, method, pairingTopic, response, { ...params, tag: 1101 })
        publish(client, method, sessionTopic, settle, { ...params, tag: 1102 })
        return true
      }
      default:
        throw new RpcError(-32601, `Method not found: ${method}`)
    }
  }

  const onMessage = (client: Client, data: string) => {
    let request: Record<string, unknown>
    try {
      request = record(JSON.parse(data))
    } catch {
      send(client, { id: null, jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' } })
      return
    }
    // An answer of the client (its acknowledgement of an irn_subscription): nothing to do.
    if (process.env.WC_RELAY_DEBUG) console.log('relay <', client.id.slice(-6), data.slice(0, 300))
    if (typeof request.method !== 'string') return
    const id = request.id ?? null
    try {
      send(client, { id, jsonrpc: '2.0', result: handle(client, request.method, request.params) })
    } catch (e) {
      const error =
        e instanceof RpcError ? e : new RpcError(-32603, e instanceof Error ? e.message : 'error')
      send(client, { id, jsonrpc: '2.0', error: { code: error.code, message: error.message } })
    }
  }

  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 })
  const http = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain' }).end('WebSocket only')
  })
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    void authenticate(req).then((issuer) => {
      if (!issuer) {
        refused++
        socket.end('HTTP/1.1 401 Unauthorized\r\nconnection: close\r\ncontent-length: 0\r\n\r\n')
        return
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        const client: Client = {
          socket: ws,
          id: issuer,
          subscriptions: new Map(),
          received: new Set(),
        }
        clients.add(client)
        ws.on('message', (data) => onMessage(client, data.toString()))
        ws.on('close', () => clients.delete(client))
      })
    })
  })
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = http.address() as AddressInfo
  return {
    url: `ws://127.0.0.1:${port}`,
    published,
    get refused() {
      return refused
    },
    close: async () => {
      for (const client of clients) client.socket.terminate()
      await new Promise<void>((resolve) => wss.close(() => resolve()))
      await new Promise<void>((resolve) => http.close(() => resolve()))
    },
  }
}

/**
 * A local relay for the spec file: started before the hooks registered after this call (the
 * harness's, which hands the relay's URL to the modal server at its start), closed after the
 * file. Answers the running relay; throws if it did not start.
 */
export function useLocalRelay(): () => LocalRelay {
  let relay: LocalRelay | undefined
  beforeAll(async () => {
    relay = await startLocalRelay()
  })
  afterAll(async () => {
    await relay?.close()
  })
  return () => {
    if (!relay) throw new Error('the local relay did not start')
    return relay
  }
}
