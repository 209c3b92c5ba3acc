/** The ESM entry of the host SDK. Importing it touches neither window nor document. */
export type {
  LatchClient,
  LatchEventHandler,
  LatchEventName,
  LatchEventPayload,
  LatchOptions,
  LinkKind,
  LoginResult,
  UnlinkTarget,
  User,
  WalletRecoveryFailure,
} from '@latch/shared'
export { LatchError } from '@latch/shared'
export { createLatch } from './create-latch.ts'
