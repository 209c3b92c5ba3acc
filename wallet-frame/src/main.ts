/**
 * The wallet frame page: a hidden iframe of the modal on the API origin. It answers only the
 * modal origin the API wrote into the page (never one read from the URL), over penpal, with the
 * methods of `WalletMethods`; every failure crosses as a LatchError.
 */
import {
  API_PREFIX,
  APP_ID_HEADER,
  CLIENT_HEADER,
  chainClient,
  DEFAULT_CHAIN_ID,
  exposeMethods,
  LATCH_DELEGATE_ADDRESS,
  LatchError,
  proxyRpc,
  remoteMethods,
  WALLET_MESSAGES,
  type WalletBatchMethods,
  type WalletMethods,
  type WalletModalMethods,
  walletAddPasskeySchema,
  walletApprovalSchema,
  walletConnectSchema,
  walletCreateSchema,
  walletPasskeyOptionsSchema,
  walletRecoverSchema,
  walletRpcSchema,
  walletSendCallsSchema,
} from '@latch/shared'
import { connect, WindowMessenger } from 'penpal'
import { approvalSurface } from './approval.ts'
import { batchReview } from './batch/review.ts'
import { browserAuthenticator } from './passkey.ts'
import { walletRpc } from './rpc/dispatch.ts'
import { answerShareAsks } from './share-channel.ts'
import { fetchApi, shareStore, walletCore } from './wallet.ts'

/** How long a batch's click waits for the modal to say the request is still open. */
const MODAL_ANSWER_MS = 5000

const modalOrigin = document
  .querySelector<HTMLMetaElement>('meta[name="latch-modal-origin"]')
  ?.getAttribute('content')
// The API serves this page at /apps/{appId}/embedded-wallets.
const appId = decodeURIComponent(location.pathname.split('/')[2] ?? '')

/** The arguments of a call, checked before anything else (the modal is trusted, not its bugs). */
function checked<T>(schema: { safeParse(v: unknown): { success: boolean; data?: T } }, v: unknown) {
  const result = schema.safeParse(v)
  if (!result.success) throw LatchError.of('invalid_request_arguments')
  return result.data as T
}

/** WebCrypto, which the frame needs, exists only in a secure context (HTTPS or localhost). */
function requireSecureContext(): void {
  if (!window.isSecureContext || !globalThis.crypto?.subtle) {
    throw LatchError.of('embedded_wallet_error', {
      message: 'The wallet frame must be served over HTTPS',
    })
  }
}

/** The refusal of any call that asks the frame to approve something by message. */
function approvalByMessage(): LatchError {
  return LatchError.of('origin_not_allowed', {
    message: 'Approvals are made by the visitor’s click in the wallet frame, never by message',
  })
}

function start(origin: string): void {
  // Where the browser refuses storage to this frame (cross-site), the share lives in memory.
  const store = shareStore(appId, () => window.localStorage)
  const api = fetchApi(location.origin, appId)
  // The frame runs its own WebAuthn ceremonies (the modal frames it with the
  // publickey-credentials permissions); their PRF output never leaves this page.
  const passkeys =
    'credentials' in navigator ? browserAuthenticator(navigator.credentials) : undefined
  const core = walletCore({ api, store, passkeys })
  const approvals = approvalSurface(document, api)
  // The export page of this origin asks for the share where only this frame's memory holds it.
  if (!store.persistent) answerShareAsks(store)
  // Chain reads through the API's proxy on this same origin (the CSP's connect-src 'self').
  const rpc = walletRpc({
    wallet: core,
    chain: (chainId, accessToken) =>
      chainClient(
        proxyRpc({
          apiUrl: location.origin,
          appId,
          chainId,
          accessToken,
          clientName: 'latch-wallet-frame',
        }),
      ),
    defaultChainId: DEFAULT_CHAIN_ID,
  })
  let modal: WalletModalMethods | null = null
  // Batches the app pays for: reviewed and confirmed in this frame (batch/review.ts).
  const batches = batchReview(
    document,
    {
      api,
      wallet: core,
      read: (chainId, accessToken, method, params) =>
        proxyRpc({
          apiUrl: location.origin,
          appId,
          chainId,
          accessToken,
          clientName: 'latch-wallet-frame',
        })(method, params),
      appName: async () => {
        const res = await fetch(
          `${location.origin}${API_PREFIX}/apps/${encodeURIComponent(appId)}`,
          {
            signal: AbortSignal.timeout(15_000),
          },
        )
        const app = (await res.json().catch(() => null)) as { name?: unknown } | null
        if (!res.ok || typeof app?.name !== 'string') throw LatchError.of('embedded_wallet_error')
        return app.name
      },
      sponsored: async (chainId, accessToken) => {
        const res = await fetch(`${location.origin}${API_PREFIX}/calls/capabilities`, {
          headers: {
            authorization: `Bearer ${accessToken}`,
            [APP_ID_HEADER]: appId,
            [CLIENT_HEADER]: 'latch-wallet-frame',
          },
          signal: AbortSignal.timeout(15_000),
        })
        const caps = (await res.json().catch(() => null)) as Record<
          string,
          { paymasterService?: { supported?: boolean } }
        > | null
        if (!res.ok || !caps) throw LatchError.of('embedded_wallet_error')
        return caps[`0x${chainId.toString(16)}`]?.paymasterService?.supported === true
      },
      // The modal answers at once (it only looks at its own state); one that does not answer
      // within MODAL_ANSWER_MS, or is not connected, cannot hold its screen: nothing is sent.
      sending: () =>
        Promise.race([
          modal ? modal[WALLET_MESSAGES.batchSending]() : Promise.reject(),
          new Promise<never>((_, late) => setTimeout(late, MODAL_ANSWER_MS)),
        ]).then(
          (open) => open === true,
          () => {
            throw LatchError.of('embedded_wallet_error', {
              message: 'The modal did not answer; nothing was sent',
            })
          },
        ),
    },
    LATCH_DELEGATE_ADDRESS,
  )
  const methods: WalletMethods &
    WalletBatchMethods & { [WALLET_MESSAGES.ready](): Promise<{ persistent: boolean }> } = {
    [WALLET_MESSAGES.ready]: async () => ({ persistent: store.persistent }),
    [WALLET_MESSAGES.create]: async (p) => {
      requireSecureContext()
      return core.create(checked(walletCreateSchema, p))
    },
    [WALLET_MESSAGES.connect]: async (p) => {
      requireSecureContext()
      return core.connect(checked(walletConnectSchema, p))
    },
    [WALLET_MESSAGES.recover]: async (p) => {
      requireSecureContext()
      return core.recover(checked(walletRecoverSchema, p))
    },
    [WALLET_MESSAGES.rpc]: async (p) => {
      requireSecureContext()
      return rpc(checked(walletRpcSchema, p))
    },
    [WALLET_MESSAGES.addPasskey]: async (p) => {
      requireSecureContext()
      return core.addPasskey(checked(walletAddPasskeySchema, p))
    },
    [WALLET_MESSAGES.passkeyOptions]: async (p) => {
      requireSecureContext()
      return core.passkeyOptions(checked(walletPasskeyOptionsSchema, p))
    },
    // A message approves nothing: the modal's origin runs third-party SDKs and is one XSS away
    // from an attacker. What opens a way to the key is approved on the frame's own click only.
    [WALLET_MESSAGES.confirmFork]: async () => {
      throw approvalByMessage()
    },
    // The modal may ask the frame to SHOW an approval; the visitor's click in it does it.
    [WALLET_MESSAGES.approval]: async (p) => {
      requireSecureContext()
      return approvals.show(checked(walletApprovalSchema, p))
    },
    [WALLET_MESSAGES.dismissApproval]: async () => {
      approvals.dismiss()
      batches.dismiss()
    },
    [WALLET_MESSAGES.sendCalls]: async (p) => {
      requireSecureContext()
      return batches.show(checked(walletSendCallsSchema, p))
    },
  }
  const connection = connect({
    messenger: new WindowMessenger({ remoteWindow: window.parent, allowedOrigins: [origin] }),
    methods: exposeMethods(methods) as unknown as Record<string, (...args: never[]) => unknown>,
    timeout: 30_000,
  })
  // The frame has the focus only while it shows an approval or a review: Escape there is the
  // visitor's Escape in the modal, which would not hear it otherwise.
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') modal?.[WALLET_MESSAGES.escape]().catch(() => {})
  })
  connection.promise.then(
    (remote) => {
      modal = remoteMethods<WalletModalMethods>(remote)
    },
    (e: unknown) => {
      console.error('Latch wallet frame: the modal did not connect', e)
    },
  )
}

if (!modalOrigin || modalOrigin.startsWith('%') || !appId) {
  console.error('Latch wallet frame: served without its modal origin or app id; not answering')
} else if (window.parent === window) {
  console.error('Latch wallet frame: not inside the modal; not answering')
} else {
  if (!window.isSecureContext) {
    console.error('Latch wallet frame: not a secure context (serve the API over HTTPS)')
  }
  start(modalOrigin)
}
