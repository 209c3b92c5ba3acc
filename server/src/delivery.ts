/**
 * How codes reach people: e-mail by nodemailer to SMTP_URL, SMS by Twilio's Messages API, and
 * with neither configured, one clearly marked line in the server log.
 */
import { LatchError } from '@latch/shared'
import type { Locale } from '@latch/shared/i18n'
import { TABLES } from '@latch/shared/i18n/all'
import nodemailer from 'nodemailer'
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js'
import type { Log } from './clock.ts'
import { CODE_TTL_MS } from './codes/lifetimes.ts'
import type { Config } from './config.ts'

export interface Delivery {
  /** `locale`: the visitor's language (the modal's, checked by the init body); English without. */
  sendEmailCode(to: string, code: string, appName: string, locale?: Locale): Promise<void>
  sendSmsCode(to: string, code: string, appName: string, locale?: Locale): Promise<void>
  close(): void
}

const minutes = (channel: keyof typeof CODE_TTL_MS): number => CODE_TTL_MS[channel] / 60_000

/** The message table's text of the locale (English when none), placeholders filled. */
function mailText(
  locale: Locale,
  which: 'subject' | 'text' | 'sms',
  values: Record<string, string | number>,
): string {
  return TABLES[locale].mail[which].replace(/\{(\w+)\}/g, (all, name: string) =>
    String(values[name] ?? all),
  )
}

export function emailText(
  code: string,
  appName: string,
  locale: Locale = 'en',
): { subject: string; text: string } {
  const values = { code, app: appName, minutes: minutes('email') }
  return { subject: mailText(locale, 'subject', values), text: mailText(locale, 'text', values) }
}

export function smsText(code: string, appName: string, locale: Locale = 'en'): string {
  return mailText(locale, 'sms', { code, app: appName, minutes: minutes('sms') })
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
    async sendEmailCode(to, code, appName, locale) {
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
      const { subject, text } = emailText(code, appName, locale)
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
    async sendSmsCode(to, code, appName, locale) {
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
          body: new URLSearchParams({
            To: to,
            From: twilio.from,
            Body: smsText(code, appName, locale),
          }),
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
