/**
 * An HTTP server speaking Twilio's Messages API: POST /2010-04-01/Accounts/{Sid}/Messages.json,
 * form-encoded To/From/Body with Basic auth; 201 with a message resource, 401 on bad
 * credentials, 400 on missing fields, 404 elsewhere.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Inbox, type ReceivedMessage } from './inbox.ts'

export interface SmsMessage extends ReceivedMessage {
  from: string
  sid: string
}

export interface TwilioDouble {
  /** Base URL for TWILIO_API_URL. */
  apiUrl: string
  /** The same as apiUrl. */
  url: string
  accountSid: string
  authToken: string
  /** A sender number the double accepts. */
  from: string
  messages: SmsMessage[]
  waitForCode(to: string, opts?: { timeoutMs?: number }): Promise<string>
  close(): Promise<void>
}

const MAX_BODY = 64 * 1024

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

function twilioError(res: ServerResponse, status: number, code: number, message: string): void {
  send(res, status, {
    code,
    message,
    more_info: `https://www.twilio.com/docs/errors/${code}`,
    status,
  })
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | null> {
  let size = 0
  const chunks: Buffer[] = []
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY) return null
    chunks.push(chunk as Buffer)
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
}

export async function startTwilioDouble(
  opts: { accountSid?: string; authToken?: string; from?: string } = {},
): Promise<TwilioDouble> {
  const accountSid = opts.accountSid ?? `AC${randomBytes(16).toString('hex')}`
  const authToken = opts.authToken ?? randomBytes(16).toString('hex')
  const inbox = new Inbox<SmsMessage>()
  const path = `/2010-04-01/Accounts/${accountSid}/Messages.json`
  const expectedAuth = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://localhost')
      const match = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(url.pathname)
      if (!match || req.method !== 'POST') {
        twilioError(res, 404, 20404, 'The requested resource was not found')
        return
      }
      if (req.headers.authorization !== expectedAuth || url.pathname !== path) {
        twilioError(res, 401, 20003, 'Authenticate')
        return
      }
      const form = await readForm(req)
      if (!form) {
        twilioError(
          res,
          400,
          21617,
          'The concatenated message body exceeds the 1600 character limit',
        )
        return
      }
      const to = form.get('To')
      const from = form.get('From')
      const body = form.get('Body')
      if (!to) return twilioError(res, 400, 21604, "A 'To' phone number is required.")
      if (!from) return twilioError(res, 400, 21603, "A 'From' phone number is required.")
      if (!body) return twilioError(res, 400, 21602, 'Message body is required.')
      const sid = `SM${randomBytes(16).toString('hex')}`
      const now = new Date()
      inbox.push({ to, from, body, sid, at: now })
      send(res, 201, {
        sid,
        account_sid: accountSid,
        to,
        from,
        body,
        status: 'queued',
        direction: 'outbound-api',
        num_segments: '1',
        date_created: now.toUTCString(),
        date_updated: now.toUTCString(),
        date_sent: null,
        price: null,
        error_code: null,
        error_message: null,
        api_version: '2010-04-01',
        uri: `/2010-04-01/Accounts/${accountSid}/Messages/${sid}.json`,
      })
    })().catch(() => {
      if (!res.headersSent) twilioError(res, 500, 20500, 'Internal Server Error')
      else res.end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  const apiUrl = `http://127.0.0.1:${port}`
  return {
    apiUrl,
    url: apiUrl,
    accountSid,
    authToken,
    from: opts.from ?? '+15005550006',
    messages: inbox.messages,
    waitForCode: (to, o) => inbox.waitForCode(to, o),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
