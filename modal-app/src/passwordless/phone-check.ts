/** The phone number check, loaded with its metadata only when a phone form is used. */
export { dialCode, validatePhone } from '@latch/shared'
export { CountrySelect } from '../components/CountrySelect.tsx'
