/**
 * Verifies a Latch webhook (the Standard Webhooks scheme): the `webhook-signature` header holds
 * one or more `v1,<base64 HMAC-SHA256>` of `{webhook-id}.{webhook-timestamp}.{body}` under the
 * endpoint's `whsec_` secret, and the timestamp must be within 5 minutes of now, so a captured
 * request cannot be replayed later. Pass the body exactly as received, before any JSON parsing.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

/** How far the timestamp may be from now, either way. */
export const WEBHOOK_TOLERANCE_S = 5 * 60

export type WebhookEventType =
  | 'user.created'
  | 'user.authenticated'
  | 'user.linked_account'
  | 'user.unlinked_account'
  | 'user.deleted'
  | 'wallet.created'
  | 'wallet.recovered'
  | 'wallet.recovery_failed'
  | 'wallet.batch_sponsored'

export interface WebhookPayload {
  type: WebhookEventType
  /** ISO 8601: when the change happened. */
  timestamp: string
  data: Record<string, unknown>
}

export interface VerifiedWebhook extends WebhookPayload {
  /** webhook-id: the same for every retry of one event; de-duplicate on it. */
  id: string
}

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError'
}

/** Headers as Node, Fetch or a plain object carry them. */
export type WebhookHeaders =
  | Headers
  | Record<string, string | string[] | undefined>
  | { get(name: string): string | null }

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') {
    return (headers as Headers).get(name) ?? undefined
  }
  const record = headers as Record<string, string | string[] | undefined>
  const key = Object.keys(record).find((k) => k.toLowerCase() === name)
  const value = key === undefined ? undefined : record[key]
  return Array.isArray(value) ? value[0] : value
}

/**
 * Checks the signature and the timestamp, then answers the parsed payload with its id; throws
 * WebhookVerificationError otherwise.
 * @example const event = verifyWebhook(req.headers, rawBody, process.env.LATCH_WEBHOOK_SECRET)
 */
export function verifyWebhook(
  headers: WebhookHeaders,
  body: string | Uint8Array,
  secret: string,
  options: { now?: Date; toleranceS?: number } = {},
): VerifiedWebhook {
  const id = header(headers, 'webhook-id')
  const timestamp = header(headers, 'webhook-timestamp')
  const signatures = header(headers, 'webhook-signature')
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError(
      'Missing webhook-id, webhook-timestamp or webhook-signature header',
    )
  }
  if (!/^\d{1,15}$/.test(timestamp)) {
    throw new WebhookVerificationError('webhook-timestamp is not a Unix time in seconds')
  }
  const nowS = Math.floor((options.now ?? new Date()).getTime() / 1000)
  if (Math.abs(nowS - Number(timestamp)) > (options.toleranceS ?? WEBHOOK_TOLERANCE_S)) {
    throw new WebhookVerificationError('webhook-timestamp is too far from now (a replay?)')
  }
  if (!secret.startsWith('whsec_')) {
    throw new WebhookVerificationError('The secret is not a whsec_ webhook secret')
  }
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8')
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${text}`).digest()
  const match = signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',')
    if (version !== 'v1' || !value) return false
    const given = Buffer.from(value, 'base64')
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
  if (!match) throw new WebhookVerificationError('No webhook-signature matches')
  let payload: WebhookPayload
  try {
    payload = JSON.parse(text) as WebhookPayload
  } catch {
    throw new WebhookVerificationError('The body is not JSON')
  }
  return { id, ...payload }
}
