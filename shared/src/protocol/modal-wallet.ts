/**
 * The penpal contracts between the modal and the wallet origin: the wallet frame's message names
 * (its penpal method names), the parameters of each, what the frame and its batch review expose,
 * and the key export page's two messages.
 */

import type { Hex } from '../types.ts'

/** Message names of the wallet frame, used as its penpal method names. */
export const WALLET_MESSAGES = {
  ready: 'latch:iframe:ready',
  create: 'latch:wallet:create',
  connect: 'latch:wallet:connect',
  recover: 'latch:wallet:recover',
  rpc: 'latch:wallet:rpc',
  /**
   * Refused, always: no message approves a fork's access to the wallet (see `approval`). Kept
   * so that an older modal, or a script of the modal's origin, hears a clear refusal.
   */
  confirmFork: 'latch:wallet:confirm-fork',
  /**
   * Shows an approval the frame draws itself (its own text and button); only the visitor's
   * trusted click there, after the frame was visible and unchanged for a moment, does it.
   */
  approval: 'latch:wallet:approval',
  /** Takes the approval off the frame (the modal's screen went away). */
  dismissApproval: 'latch:wallet:dismiss-approval',
  /** Seals this device's share under a passkey (a recovery method added to an existing wallet). */
  addPasskey: 'latch:wallet:add-passkey',
  /** The RP ID and name for a passkey the modal registers for the frame. */
  passkeyOptions: 'latch:wallet:passkey-options',
  /**
   * Shows a batch of calls the app pays for on the frame's own review (every call decoded, the
   * fee line); only the visitor's trusted click there signs it and sends it to the app's sponsor.
   * `dismissApproval` takes it away too.
   */
  sendCalls: 'latch:wallet:send-calls',
  /**
   * The frame to the modal, on the visitor's click on the batch review, before anything is
   * signed: may this batch's request still be answered?
   * `true`: the modal now refuses closing until the review's answer, so a batch that may be sent
   * is never reported as refused. `false`: the visitor closed the request before the click
   * reached the modal (its caller already heard transaction_exited), so the frame sends nothing.
   * Without arguments: the modal can veto a send (as closing does) but never start one.
   */
  batchSending: 'latch:wallet:batch-sending',
  /**
   * The frame to the modal: the visitor pressed Escape on the frame's approval or review, which
   * holds the keyboard's focus, so the modal's own document never hears the key. The modal does
   * what Escape on its document does (closes, when it is a dialog and may be closed). Without
   * arguments: it can close the modal, never approve anything.
   */
  escape: 'latch:wallet:escape',
} as const

/**
 * The key export page (wallet-frame/src/export.ts) and the modal's screen. `show`: the modal
 * hands the page the access token over penpal after the handshake (never in the URL, which
 * leaks into logs and history); the page checks it and offers its Reveal button, answering the
 * address only. Nothing sent over penpal reveals the key: only the visitor's own click on that
 * button inside the page does. The page then tells the modal `revealed` (the address only), from
 * which the modal counts the key's minimum display time.
 */
export const EXPORT_MESSAGES = {
  show: 'latch:export:show',
  revealed: 'latch:export:revealed',
  /** Escape pressed on the page (its focus is there): the modal does what its own Escape does. */
  escape: 'latch:export:escape',
} as const
export interface ExportFrameMethods {
  [EXPORT_MESSAGES.show](params: { address: Hex; accessToken: string }): Promise<{ address: Hex }>
}
/** What the modal's export screen exposes to the export page. */
export interface ExportModalMethods {
  [EXPORT_MESSAGES.revealed](params: { address: Hex }): Promise<void>
  [EXPORT_MESSAGES.escape](): Promise<void>
}

export interface WalletCreateParams {
  accessToken: string
  recoveryPin?: string
  /** 'passkey': the recovery share is sealed under a passkey's PRF output (no recoveryPin then). */
  recoveryMethod?: 'passkey'
  /**
   * The passkey to seal under (base64url id), registered by the modal without any PRF input
   * (Chromium refuses `create` in a cross-origin frame without the frame's own click); the
   * frame then asks it for the PRF output itself. Absent: the frame registers one.
   */
  credentialId?: string
}
export interface WalletConnectParams {
  address: Hex
  accessToken: string
}
export interface WalletRecoverParams {
  address: Hex
  accessToken: string
  recoveryPin?: string
  /** 'passkey': recover with one of the wallet's passkeys, whatever its main method. */
  recoveryMethod?: 'passkey'
}
export interface WalletAddPasskeyParams {
  address: Hex
  accessToken: string
  /** As WalletCreateParams.credentialId. */
  credentialId?: string
}
export interface WalletPasskeyOptionsParams {
  accessToken: string
}
/** What the modal needs to register a passkey for the frame: nothing secret. */
export interface WalletPasskeyOptions {
  rpId: string
  rpName: string
}
/**
 * What the wallet frame's approval shows. `fork-show-code`: on the device that holds the
 * wallet, a button that shows a pairing code for a fork of this session. `fork-enter-code`: on
 * the forked session's device, an input for that code and a button that pairs. `link`: "Let
 * {method} sign in to your account and open your wallet?" for a new sign-in method (`method`, the
 * kind and identifier the server binds the approval to, which the frame names on its own).
 */
export type WalletApprovalKind = 'fork-show-code' | 'fork-enter-code' | 'link'
export type LinkApprovalMethod = 'email' | 'phone' | 'oauth' | 'siwe' | 'passkey'
export interface WalletApprovalParams {
  accessToken: string
  kind: WalletApprovalKind
  /** The modal's language: the frame's texts follow it. */
  locale?: string
  /** `link`: the kind and identifier of the method the approval lets in. */
  method?: { type: LinkApprovalMethod; identifier: string }
  /** The modal's theme colours (#hex), so the frame's text and button match the screen. */
  colors?: { background?: string; foreground?: string; accent?: string; accentForeground?: string }
}
export interface WalletConfirmForkParams {
  accessToken: string
  /** The fork token of the link the visitor chose a wallet app for. */
  forkToken: string
}
/** A batch of calls for the app's sponsor (EIP-5792 `wallet_sendCalls`, paid by the app). */
export interface WalletSendCallsParams {
  address: Hex
  accessToken: string
  chainId: number
  calls: { to: Hex; value?: string; data?: string }[]
  /** The dapp's own id for the batch (EIP-5792's `id`): a label the API keeps, never signed. */
  id?: string
  /** The modal's language: the frame's texts follow it. */
  locale?: string
  colors?: WalletApprovalParams['colors']
}
export interface WalletRpcParams {
  address: Hex
  accessToken: string
  request: { method: string; params?: unknown }
}

/** Methods the wallet frame exposes to the modal, named by WALLET_MESSAGES. */
export interface WalletMethods {
  [WALLET_MESSAGES.create](params: WalletCreateParams): Promise<{ address: Hex }>
  [WALLET_MESSAGES.connect](params: WalletConnectParams): Promise<{ address: Hex }>
  [WALLET_MESSAGES.recover](params: WalletRecoverParams): Promise<{ address: Hex }>
  [WALLET_MESSAGES.rpc](params: WalletRpcParams): Promise<{ response: unknown }>
  /** Refused with origin_not_allowed: a message approves nothing (`approval` does, by click). */
  [WALLET_MESSAGES.confirmFork](params: WalletConfirmForkParams): Promise<{ confirmed: true }>
  /**
   * Draws the approval and settles once the visitor's click in the frame did it (the code is
   * shown, the device paired, the method approved); rejects when dismissed or replaced.
   */
  [WALLET_MESSAGES.approval](params: WalletApprovalParams): Promise<{ done: true }>
  [WALLET_MESSAGES.dismissApproval](): Promise<void>
  /**
   * Adds passkey recovery to the wallet usable on this device: the frame runs the WebAuthn
   * ceremony itself and answers the address only (never PRF output, key or share).
   */
  [WALLET_MESSAGES.addPasskey](params: WalletAddPasskeyParams): Promise<{ address: Hex }>
  [WALLET_MESSAGES.passkeyOptions](
    params: WalletPasskeyOptionsParams,
  ): Promise<WalletPasskeyOptions>
}

/** The frame's batch review (wallet-frame/src/batch/review.ts), apart until the modal calls it. */
export interface WalletBatchMethods {
  /** Resolves with the batch's EIP-5792 id once the visitor confirmed and the sponsor sent it. */
  [WALLET_MESSAGES.sendCalls](params: WalletSendCallsParams): Promise<{ id: string }>
}
/**
 * What the modal exposes to the wallet frame: an answer that can stop a send and a close on
 * Escape; neither can approve anything.
 */
export interface WalletModalMethods {
  [WALLET_MESSAGES.batchSending](): Promise<boolean>
  [WALLET_MESSAGES.escape](): Promise<void>
}
