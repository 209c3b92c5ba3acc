/** The phone number check, loaded with its metadata only when a phone form is used. */
export { validatePhone } from '@latch/shared'
