/**
 * The small, always-loaded part of the in-app wallet: the create-on-login rule and the host's
 * entries. Everything else (the frame, the gate, the screens) loads when first needed, so the
 * landing's bundle does not carry it.
 */
import {
  embeddedWallet,
  type Hex,
  type SignMessageUIOptions,
  SUCCESS_CLOSE_BEFORE_WALLET_CREATION_MS,
  type TransactionReceipt,
  type TransactionRequest,
  type TransactionUIOptions,
  type User,
  type WalletAccount,
} from '@latch/shared'
import { addNextStep, type NextStepRule, navigate } from '../flow/flow.ts'
import type { AppView } from '../startup/config.ts'
import { freshWalletState, store } from '../store.ts'
import type { SignPayload } from './requests.ts'

/**
 * Whether a user who just signed in gets a wallet (the app's createOnLogin): 'all-users' when they
 * have no in-app wallet, 'users-without-wallets' when they have no wallet at all.
 */
export function needsWalletAtLogin(app: AppView, user: User): boolean {
  const setting = app.config.embeddedWalletConfig.createOnLogin
  if (setting === 'all-users') return !embeddedWallet(user.linkedAccounts)
  if (setting === 'users-without-wallets') {
    return !user.linkedAccounts.some((account) => account.type === 'wallet')
  }
  return false
}

/**
 * After a sign-in that needs a wallet: 500 ms of success, then the create screen. The login
 * flow stays the flow on screen, so the host's login() settles when the wallet screens end:
 * with the user and their wallet once created, or with the sign-in's result when the visitor
 * closes the create screen (they are signed in either way).
 */
export const createOnLogin: NextStepRule = ({ flow, result, app }) =>
  flow.kind === 'login' && needsWalletAtLogin(app, result.user)
    ? {
        pauseMs: SUCCESS_CLOSE_BEFORE_WALLET_CREATION_MS,
        start: () => {
          store.setState({ wallet: freshWalletState() })
          navigate('EMBEDDED_WALLET_SCREEN')
        },
      }
    : null

addNextStep(createOnLogin)

const flows = () => import('./flows.ts')

/** The host's createWallet(): loads the wallet's code, then runs the flow. */
export const createWallet = (): Promise<WalletAccount> => flows().then((m) => m.createWallet())

/** The host's recoverWallet(): loads the wallet's code, then passes the connecting gate. */
export const recoverWallet = (): Promise<WalletAccount> => flows().then((m) => m.recoverWallet())

const signing = () => import('./sign.ts')
const sending = () => import('./send.ts')

/**
 * The host's signMessage(): loads the sign flow, then runs it (docs/behaviour.md,
 * "EMBEDDED_WALLET_SIGN_REQUEST_SCREEN").
 */
export const signMessage = (message: string, options?: SignMessageUIOptions): Promise<Hex> =>
  signing().then((m) => m.signFlow({ kind: 'message', message }, options))

/**
 * A signature request of either kind, for callers inside the modal (the EIP-1193 provider's
 * personal_sign, eth_sign and eth_signTypedData_v4 go through the same sign screen).
 * @example signFlow({ kind: 'typedData', typedData }, { title: 'Sign the order' })
 */
export const signFlow = (payload: SignPayload, options?: SignMessageUIOptions): Promise<Hex> =>
  signing().then((m) => m.signFlow(payload, options))

/** The host's sendTransaction(): loads the send flow, then runs it. */
export const sendTransaction = (
  request: TransactionRequest,
  options?: TransactionUIOptions,
): Promise<TransactionReceipt> => sending().then((m) => m.sendTransactionFlow(request, options))

/** The host's exportWallet(): loads the export flow (wallet/export.ts), then runs it. */
export const exportWallet = (): Promise<void> => import('./export.ts').then((m) => m.exportWallet())

/** The host provider's chain reads (ModalMethods.rpc), through the API's chain proxy. */
export const chainRead = (chainId: number, method: string, params?: unknown): Promise<unknown> =>
  import('./chain-read.ts').then((m) => m.chainRead(chainId, method, params))
