/** Test support shared with the end-to-end harness. */

export {
  ANVIL_ACCOUNTS,
  ANVIL_BALANCE_WEI,
  type AnvilOptions,
  anvilBinary,
  type RunningAnvil,
  startAnvil,
} from './anvil.ts'
export { findCode } from './inbox.ts'
export {
  authorizeAtMock,
  type MockPerson,
  type MockProviders,
  startMockProviders,
} from './mock-providers.ts'
export {
  type ControlledPostgres,
  POSTGRES_BIN,
  postgresAvailable,
  type RunningPostgres,
  runPostgres,
  startPostgres,
} from './postgres.ts'
export { type MailMessage, type SmtpCatcher, startSmtpCatcher } from './smtp.ts'
export { type SmsMessage, startTwilioDouble, type TwilioDouble } from './twilio.ts'
