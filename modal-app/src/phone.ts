/**
 * The US phone check (docs/behaviour.md, "Input rules") carries the phone metadata, too large
 * for the landing's budget: it loads when a phone form first shows, not before the landing.
 */
import type { Result } from '@latch/shared'

type PhoneCheck = (input: string) => Result<string>

let check: PhoneCheck | null = null
let loading: Promise<PhoneCheck> | null = null

export function loadPhoneCheck(): Promise<PhoneCheck> {
  loading ??= import('./phone-check.ts').then((m) => {
    check = m.validatePhone
    return m.validatePhone
  })
  return loading
}

/** The check if it has loaded, else null. */
export function phoneCheck(): PhoneCheck | null {
  return check
}
