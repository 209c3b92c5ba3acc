/** A real SMTP server (smtp-server) that keeps what it receives, for tests and the e2e harness. */
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { Inbox, type ReceivedMessage } from './inbox.ts'

export interface MailMessage extends ReceivedMessage {
  from: string
  /** Decoded (a Japanese subject reads as Japanese). */
  subject: string
  /** The raw message: headers and body. */
  raw: string
}

export interface SmtpCatcher {
  /** smtp://127.0.0.1:port, for SMTP_URL. */
  url: string
  messages: MailMessage[]
  waitForCode(to: string, opts?: { timeoutMs?: number }): Promise<string>
  close(): Promise<void>
}

const MAX_MESSAGE_BYTES = 1024 * 1024

function header(raw: string, name: string): string {
  const head = raw.split(/\r?\n\r?\n/, 1)[0] ?? ''
  // Unfold continuation lines, then find the header.
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ')
  const line = unfolded
    .split(/\r?\n/)
    .find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`))
  return line ? line.slice(name.length + 1).trim() : ''
}

/** RFC 2047 encoded words (`=?UTF-8?B?…?=`, `=?UTF-8?Q?…?=`), as a non-English subject comes. */
export function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(
      /=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g,
      (_all, _charset: string, enc: string, text: string) =>
        enc.toUpperCase() === 'B'
          ? Buffer.from(text, 'base64').toString('utf8')
          : decodeQuotedPrintable(text.replace(/_/g, ' ')),
    )
}

function decodeQuotedPrintable(text: string): string {
  const bytes = text
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-Fa-f]{2})/g, (_all, hex: string) => `%${hex}`)
  // Percent-encode what is not already, so decodeURIComponent reads the UTF-8 bytes.
  return decodeURIComponent(bytes.replace(/%(?![0-9A-Fa-f]{2})/g, '%25'))
}

/** A single-part body by its Content-Transfer-Encoding (nodemailer picks one for non-ASCII). */
function decodeBody(raw: string, body: string): string {
  const encoding = header(raw, 'content-transfer-encoding').toLowerCase()
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body)
  return body
}

/** `password`: the server also takes AUTH, and accepts any user with that password only. */
export async function startSmtpCatcher(options: { password?: string } = {}): Promise<SmtpCatcher> {
  const inbox = new Inbox<MailMessage>()
  const { password } = options
  const server = new SMTPServer({
    authOptional: password === undefined,
    ...(password !== undefined && {
      onAuth(auth, _session, callback) {
        if (auth.password === password) callback(null, { user: auth.username })
        else callback(new Error('Invalid username or password'))
      },
    }),
    disabledCommands: ['STARTTLS'],
    size: MAX_MESSAGE_BYTES,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        const subject = decodeWords(header(raw, 'subject'))
        const body = decodeBody(
          raw,
          raw
            .split(/\r?\n\r?\n/)
            .slice(1)
            .join('\n\n'),
        )
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : ''
        for (const rcpt of session.envelope.rcptTo) {
          // The subject carries the code; the body is the fallback.
          inbox.push({
            to: rcpt.address,
            from,
            subject,
            raw,
            body: `${subject}\n${body}`,
            at: new Date(),
          })
        }
        callback()
      })
    },
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  server.on('error', () => {})
  const { port } = server.server.address() as AddressInfo
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages: inbox.messages,
    waitForCode: (to, opts) => inbox.waitForCode(to, opts),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
