import {
  type CountryCode,
  getCountryCallingCode,
  isSupportedCountry,
  parsePhoneNumberFromString,
} from 'libphonenumber-js/min'
import { LatchError } from './errors/latch-error.ts'
import { fail, ok, type Result } from './result.ts'

/**
 * Parses a phone number into E.164 ('+15555550123'). A number without its `+` prefix is read as
 * one of `country` (two-letter code, US by default, as SPEC's phone field). A number outside the
 * US gets `invalid_phone_number`, not the US wording of `invalid_phone`.
 */
export function validatePhone(input: string, country = 'US'): Result<string> {
  const region: CountryCode = isSupportedCountry(country) ? country : 'US'
  const parsed = parsePhoneNumberFromString(input.trim(), region)
  if (!parsed?.isValid()) {
    return fail(LatchError.of(region === 'US' ? 'invalid_phone' : 'invalid_phone_number'))
  }
  return ok(parsed.number)
}

/** The country's dialling code with its plus ('+44' for GB), or null for an unknown country. */
export function dialCode(country: string): string | null {
  return isSupportedCountry(country) ? `+${getCountryCallingCode(country)}` : null
}
