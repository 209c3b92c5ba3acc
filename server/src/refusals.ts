/**
 * Errors of the abuse guards (SMS toll fraud, guessing). They live here rather than in shared's
 * catalogue because the modal never branches on them: a 422 on SMS submit shows the server's
 * message and a 429 the generic one (docs/behaviour.md, "LANDING"), so they would only add
 * bytes to the modal's landing, which has none to spare. Codes, statuses and messages are as
 * stable as the catalogue's.
 */
import { LatchError } from '@latch/shared'

const REFUSALS = {
  sms_country_not_allowed: {
    status: 422,
    message: 'This app does not send SMS codes to that country',
    retryable: false,
  },
  sms_number_not_mobile: {
    status: 422,
    message: 'SMS codes can only be sent to mobile numbers',
    retryable: false,
  },
  sms_budget_exhausted: {
    status: 429,
    message: 'Too many SMS codes have been sent, please try again later',
    retryable: true,
  },
  too_many_failed_attempts: {
    status: 429,
    message: 'Too many incorrect codes for this account today, please try again later',
    retryable: true,
  },
} as const

export type Refusal = keyof typeof REFUSALS

/** `retryAfterS`: the seconds a 429 refusal asks the client to wait (Retry-After). */
export function refusal(code: Refusal, retryAfterS?: number): LatchError {
  return new LatchError({ code, type: 'api_error', ...REFUSALS[code], retryAfter: retryAfterS })
}
