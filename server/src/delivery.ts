/**
 * How codes reach people: e-mail by nodemailer to SMTP_URL, SMS by Twilio's Messages API, and
 * with neither configured, one clearly marked line in the server log.
 */
import { LatchError } from '@latch/shared'
import nodemailer from 'nodemailer'
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js'
import type { Log } from './clock.ts'
import { CODE_TTL_MS } from './codes/lifetimes.ts'
import type { Config } from './config.ts'

export interface Delivery {
  sendEmailCode(to: string, code: string, appName: string): Promise<void>
  sendSmsCode(to: string, code: string, appName: string): Promise<void>
  close(): void
}

const minutes = (channel: keyof typeof CODE_TTL_MS): number => CODE_TTL_MS[channel] / 60_000

export function emailText(code: string, appName: string): { subject: string; text: string } {
  return {
    subject: `${code} is your ${appName} login code`,
    text: `Your ${appName} login code is ${code}.\n\nIt expires in ${minutes('email')} minutes. If you did not ask for it, ignore this e-mail.\n`,
  }
}

export function smsText(code: string, appName: string): string {
  return `${code} is your ${appName} login code. It expires in ${minutes('sms')} minutes.`
}

const SEND_TIMEOUT_MS = 10_000

/**
 * Transport options from SMTP_URL: smtp://user:pass@host:port (STARTTLS when offered) or
 * smtps:// (TLS from the start); `?ignoreTLS=true` and `?requireTLS=true` are honoured.
 */
export function smtpOptions(smtpUrl: string): SMTPTransport.Options {
  const u = new URL(smtpUrl)
  const secure = u.protocol === 'smtps:'
  const flag = (name: string) => u.searchParams.get(name) === 'true'
  return {
    host: u.hostname,
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    secure,
    ...(u.username
      ? { auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } }
      : {}),
    ignoreTLS: flag('ignoreTLS'),
    requireTLS: flag('requireTLS'),
    connectionTimeout: SEND_TIMEOUT_MS,
    greetingTimeout: SEND_TIMEOUT_MS,
    socketTimeout: SEND_TIMEOUT_MS,
  }
}

export function createDelivery(
  config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'twilio' | 'production'>,
  log: Log,
): Delivery {
  const transport = config.smtpUrl ? nodemailer.createTransport(smtpOptions(config.smtpUrl)) : null
  const twilio = config.twilio

  return {
    async sendEmailCode(to, code, appName) {
      if (!transport) {
        // loadConfig refuses production without SMTP_URL; this holds should anything else
        // build a delivery: a code in a production log is a sign-in for whoever reads it.
        if (config.production) {
          throw LatchError.of('method_not_available', {
            status: 503,
            message: 'E-mail delivery is not configured',
          })
        }
        log(`[latch] e-mail code for ${to}: ${code}`)
        return
      }
      const { subject, text } = emailText(code, appName)
      try {
        await transport.sendMail({ from: config.mailFrom, to, subject, text })
      } catch (e) {
        log(`[latch] e-mail delivery to ${to} failed: ${(e as Error).message}`)
        throw LatchError.of('internal_error', {
          status: 502,
          message: 'Could not send the e-mail',
          cause: e,
        })
      }
    },
    async sendSmsCode(to, code, appName) {
      if (!twilio) {
        // Production never prints codes; SMS is simply not available there without Twilio.
        if (config.production) {
          throw LatchError.of('method_not_available', {
            status: 503,
            message: 'SMS delivery is not configured',
          })
        }
        log(`[latch] SMS code for ${to}: ${code}`)
        return
      }
      const url = `${twilio.apiUrl}/2010-04-01/Accounts/${encodeURIComponent(twilio.accountSid)}/Messages.json`
      const auth = Buffer.from(`${twilio.accountSid}:${twilio.authToken}`).toString('base64')
      let status = 0
      let detail = ''
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: {
            authorization: `Basic ${auth}`,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: new URLSearchParams({ To: to, From: twilio.from, Body: smsText(code, appName) }),
          signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
        })
        status = res.status
        if (res.ok) return
        detail = (await res.text()).slice(0, 200)
      } catch (e) {
        detail = (e as Error).message
      }
      log(`[latch] SMS delivery to ${to} failed: ${status || 'no answer'} ${detail}`)
      throw LatchError.of('internal_error', { status: 502, message: 'Could not send the SMS' })
    },
    close() {
      transport?.close()
    },
  }
}
