/** @latch/react: a provider and hooks over the Latch host SDK. */
export type {
  LatchClient,
  LinkKind,
  LoginResult,
  UnlinkTarget,
  User,
} from '@latch/host-sdk'
export { LatchError } from '@latch/host-sdk'
export type { SendCallsRequest, WalletAccount } from '@latch/shared'
export {
  type CallsStatus,
  type UseConnectWalletOptions,
  type UseLatch,
  type UseLoginOptions,
  type UseSendCalls,
  type UseSendCallsOptions,
  type UseWallet,
  useConnectWallet,
  useFork,
  useLatch,
  useLogin,
  useSendCalls,
  useWallet,
} from './hooks.ts'
export { LatchLoginButton, type LatchLoginButtonProps } from './login-button.tsx'
export { LatchProvider, type LatchProviderProps } from './provider.tsx'
export type { LatchState } from './store.ts'
