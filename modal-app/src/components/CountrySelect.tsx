/**
 * The phone number's country, when the app lists several: it comes with the phone check
 * (phone-check.ts), out of the landing's chunk, as does its country names' Intl work.
 */
import { locale, t } from '../i18n/i18n.ts'
import { dialCode } from '../passwordless/phone-check.ts'

/**
 * The phone number's country among the app's SMS countries: each by its name in the visitor's
 * language and its dialling code ('United Kingdom (+44)').
 */
export function CountrySelect({
  countries,
  value,
  onChange,
}: {
  countries: readonly string[]
  value: string
  onChange: (country: string) => void
}) {
  const names = regionNames()
  return (
    <select
      className="latch-country"
      aria-label={t('phoneCountry')}
      data-testid="phone-country"
      value={value}
      onChange={(e) => onChange(e.target.value)}
    >
      {countries.map((code) => {
        const dial = dialCode(code)
        const label = names?.of(code) ?? code
        return (
          <option key={code} value={code}>
            {dial ? `${label} (${dial})` : label}
          </option>
        )
      })}
    </select>
  )
}

/** Country names in the visitor's language, where the browser has them. */
function regionNames(): Intl.DisplayNames | null {
  try {
    return new Intl.DisplayNames([locale()], { type: 'region' })
  } catch {
    return null
  }
}
