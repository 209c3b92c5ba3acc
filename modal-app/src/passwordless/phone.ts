/**
 * The phone check (docs/behaviour.md, "Input rules") carries the phone metadata, too large for
 * the landing's budget: it loads when a phone form first shows, not before the landing.
 */
import type { Result } from '@latch/shared'
import type { ComponentType } from 'react'

/** A number into E.164, a national one read as one of `country` (US by default). */
type PhoneCheck = (input: string, country?: string) => Result<string>

/** The loaded module: the check, the countries' dialling codes and the country select. */
export interface PhoneTools {
  validatePhone: PhoneCheck
  dialCode(country: string): string | null
  CountrySelect: ComponentType<{
    countries: readonly string[]
    value: string
    onChange: (country: string) => void
  }>
}

let tools: PhoneTools | null = null
let loading: Promise<PhoneTools> | null = null

export function loadPhoneTools(): Promise<PhoneTools> {
  loading ??= import('./phone-check.ts').then((m) => {
    tools = m
    return m
  })
  return loading
}

export function loadPhoneCheck(): Promise<PhoneCheck> {
  return loadPhoneTools().then((m) => m.validatePhone)
}

/** The tools if they have loaded, else null. */
export function phoneTools(): PhoneTools | null {
  return tools
}

/** The check if it has loaded, else null. */
export function phoneCheck(): PhoneCheck | null {
  return tools?.validatePhone ?? null
}

/** The countries the phone field offers: the app's SMS countries, the US without a list. */
export function phoneCountries(list: readonly string[] | undefined): readonly string[] {
  return list?.length ? list : ['US']
}
