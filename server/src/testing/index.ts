/** Test support shared with the end-to-end harness. */

export {
  authorizeAtMock,
  type MockPerson,
  type MockProviders,
  startMockProviders,
} from '../oauth/mockProviders.ts'
export { findCode } from './inbox.ts'
export { POSTGRES_BIN, postgresAvailable, type RunningPostgres, startPostgres } from './postgres.ts'
export { type MailMessage, type SmtpCatcher, startSmtpCatcher } from './smtp.ts'
export { type SmsMessage, startTwilioDouble, type TwilioDouble } from './twilio.ts'
