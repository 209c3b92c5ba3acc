import { createHmac, randomBytes } from 'node:crypto'
import { expect, test } from 'vitest'
import { verifyWebhook, WebhookVerificationError } from './webhooks.ts'

const secret = `whsec_${randomBytes(32).toString('base64')}`
const body = JSON.stringify({
  type: 'user.created',
  timestamp: '2026-01-01T00:00:00.000Z',
  data: {},
})
const now = new Date('2026-01-01T00:00:00Z')
const nowS = Math.floor(now.getTime() / 1000)

/** A signature as the specification defines it, made here independently of the verifier. */
function sign(id: string, ts: number, text: string, key = secret): string {
  const raw = Buffer.from(key.slice('whsec_'.length), 'base64')
  return `v1,${createHmac('sha256', raw).update(`${id}.${ts}.${text}`).digest('base64')}`
}

const headers = (ts = nowS, signature = sign('msg_1', ts, body)) => ({
  'webhook-id': 'msg_1',
  'webhook-timestamp': String(ts),
  'webhook-signature': signature,
})

const refused = (fn: () => unknown, message: RegExp) => {
  expect(fn).toThrow(WebhookVerificationError)
  expect(fn).toThrow(message)
}

test('behavior: a signed delivery verifies, from a plain object or a Headers, answering its id and payload', () => {
  expect(verifyWebhook(headers(), body, secret, { now })).toEqual({
    id: 'msg_1',
    type: 'user.created',
    timestamp: '2026-01-01T00:00:00.000Z',
    data: {},
  })
  expect(verifyWebhook(new Headers(headers()), Buffer.from(body), secret, { now }).id).toBe('msg_1')
  // Several signatures (a rotation): one that matches is enough.
  const other = `whsec_${randomBytes(32).toString('base64')}`
  const both = `${sign('msg_1', nowS, body, other)} ${sign('msg_1', nowS, body)}`
  expect(verifyWebhook(headers(nowS, both), body, secret, { now }).id).toBe('msg_1')
})

test('refusal: timestamps more than 5 minutes away either way are refused; 5 minutes exactly pass', () => {
  for (const ts of [nowS - 301, nowS + 301, nowS - 86_400]) {
    refused(() => verifyWebhook(headers(ts), body, secret, { now }), /too far from now/)
  }
  for (const ts of [nowS - 300, nowS + 300]) {
    expect(verifyWebhook(headers(ts), body, secret, { now }).id).toBe('msg_1')
  }
  // The real clock by default: a delivery signed an hour ago is a replay.
  const old = Math.floor(Date.now() / 1000) - 3600
  refused(() => verifyWebhook(headers(old), body, secret), /too far from now/)
  refused(() => verifyWebhook(headers(Number.NaN), body, secret, { now }), /Unix time/)
})

test('refusal: a changed body, id or timestamp, another secret, missing headers or a non-whsec secret', () => {
  refused(() => verifyWebhook(headers(), `${body} `, secret, { now }), /No webhook-signature/)
  refused(
    () => verifyWebhook({ ...headers(), 'webhook-id': 'msg_2' }, body, secret, { now }),
    /No webhook-signature/,
  )
  refused(
    () => verifyWebhook(headers(nowS, sign('msg_1', nowS + 1, body)), body, secret, { now }),
    /No webhook-signature/,
  )
  const other = `whsec_${randomBytes(32).toString('base64')}`
  refused(() => verifyWebhook(headers(), body, other, { now }), /No webhook-signature/)
  refused(
    () => verifyWebhook({ 'webhook-id': 'msg_1' }, body, secret, { now }),
    /Missing webhook-id/,
  )
  refused(() => verifyWebhook(headers(), body, secret.slice(6), { now }), /not a whsec_/)
  refused(
    () =>
      verifyWebhook(headers(nowS, `v2,${sign('msg_1', nowS, body).slice(3)}`), body, secret, {
        now,
      }),
    /No webhook-signature/,
  )
})
