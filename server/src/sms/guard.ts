/**
 * Toll-fraud guards on the SMS path: a code goes only to a mobile number in one of the app's
 * countries, and within the per-app and global hourly and daily budgets. Someone with many
 * numbers and addresses passes every per-number and per-IP limit; these bound what they cost.
 */
import type { NumberType } from 'libphonenumber-js'
import type { AppRecord } from '../apps/service.ts'
import type { Clock } from '../clock.ts'
import type { SmsBudget } from '../config.ts'
import type { Db } from '../db/index.ts'
import { hit, type Limit } from '../ratelimit.ts'
import { refusal } from '../refusals.ts'

type FullMetadata = typeof import('libphonenumber-js/max')
let full: Promise<FullMetadata> | undefined
/**
 * libphonenumber with its full metadata, the only build that tells a mobile number from a
 * premium-rate one. It is large, so it loads at the first SMS sign-in, never with the server
 * or in the modal (whose /min build only checks the shape of a number).
 */
function fullMetadata(): Promise<FullMetadata> {
  full ??= import('libphonenumber-js/max')
  return full
}

/**
 * Numbers a code may go to. US numbers cannot be told apart and type as FIXED_LINE_OR_MOBILE;
 * the rest (premium-rate, shared-cost, toll-free, VoIP, pagers, personal and universal
 * numbers, plain fixed lines, and numbers the metadata cannot type) are where pumped traffic
 * goes and no person reads a text.
 */
const SENDABLE: ReadonlySet<NumberType> = new Set<NumberType>(['MOBILE', 'FIXED_LINE_OR_MOBILE'])

/** Refuses a number outside the app's SMS countries (422) or not a mobile number (422). */
export async function admitNumber(app: AppRecord, e164: string): Promise<void> {
  const { parsePhoneNumberFromString } = await fullMetadata()
  const parsed = parsePhoneNumberFromString(e164)
  // Non-geographic numbers (+800, +882, ...) have no country and so are never in the list.
  const country = parsed?.country
  if (!parsed || !country || !app.smsCountries.includes(country)) {
    throw refusal('sms_country_not_allowed')
  }
  const type = parsed.getType()
  if (!type || !SENDABLE.has(type)) throw refusal('sms_number_not_mobile')
}

const HOUR = 60 * 60_000
const DAY = 24 * HOUR

/**
 * Counts one SMS against the app's and the server's hourly and daily budgets; past any of
 * them: sms_budget_exhausted (429) with the seconds until that window ends. Run inside the
 * code's transaction, so a refused send spends nothing.
 */
export async function chargeSms(
  db: Db,
  clock: Clock,
  budget: SmsBudget,
  appId: string,
): Promise<void> {
  const spent = (retryAfterS: number) => refusal('sms_budget_exhausted', retryAfterS)
  const windows: [string, Limit][] = [
    [`sms:app:${appId}:hour`, { max: budget.appHourly, windowMs: HOUR }],
    [`sms:app:${appId}:day`, { max: budget.appDaily, windowMs: DAY }],
    ['sms:all:hour', { max: budget.globalHourly, windowMs: HOUR }],
    ['sms:all:day', { max: budget.globalDaily, windowMs: DAY }],
  ]
  for (const [key, limit] of windows) await hit(db, clock, key, limit, spent)
}
