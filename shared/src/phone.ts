import { parsePhoneNumberFromString } from 'libphonenumber-js/min'
import { LatchError } from './errors/latch-error.ts'
import { fail, ok, type Result } from './result.ts'

/** Parses a US phone number into E.164 ('+15555550123'). */
export function validatePhone(input: string): Result<string> {
  const parsed = parsePhoneNumberFromString(input.trim(), 'US')
  if (!parsed?.isValid()) return fail(LatchError.of('invalid_phone'))
  return ok(parsed.number)
}
