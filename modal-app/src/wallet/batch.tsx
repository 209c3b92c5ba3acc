/**
 * wallet_sendCalls on the send screen: the wallet frame draws its own review of the batch (every
 * call decoded, who pays the fee, its own armed button) over this slot, and only the visitor's
 * click there signs it and sends it to the app's sponsor (wallet-frame/src/batch/review.ts). The
 * modal hears the batch's id and hands it to the caller; a refusal stays on screen, and leaving
 * then rejects with it. Leaving the screen takes the review away, but not once the frame asked, on
 * the click and before signing, whether the request is still open and heard yes: from then until
 * its answer, closing is refused (the batch may be sent, so the caller must not hear a
 * rejection). A visitor who closed first was answered no, and the frame sends nothing.
 */
import { type LatchError, toLatchError, WALLET_MESSAGES } from '@latch/shared'
import type { MessageKey } from '@latch/shared/i18n'
import { useEffect, useRef, useState } from 'react'
import { blockClose, deliver } from '../flow/deliver.ts'
import { onFlow } from '../flow/flow.ts'
import { useModal } from '../hooks.ts'
import { locale, t } from '../i18n/i18n.ts'
import type { BatchRequest } from '../store.ts'
import { frameColors } from './export.ts'
import { walletStepFailed } from './flows.ts'
import { onBatchSending, showWalletFrameOver, walletFrame } from './frame.ts'
import { usableWallet, walletAccessToken } from './sign.ts'

/**
 * The sponsor's refusals, in the visitor's language; each says nothing was sent. Where the
 * server's message names what it refused (which call, which contract, which chain), it follows as
 * the detail, as the server wrote it.
 */
const REFUSALS: Record<string, { key: MessageKey; detail: boolean }> = {
  sponsor_budget_exhausted: { key: 'batchBudget', detail: false },
  sponsor_out_of_funds: { key: 'batchNoFunds', detail: false },
  sponsor_policy_refused: { key: 'batchPolicy', detail: true },
  sponsor_unavailable: { key: 'batchUnavailable', detail: true },
  batch_reverted: { key: 'batchReverted', detail: true },
}

/** What the screen shows of a refusal: its text, and the server's reason under it. */
export function refusalText(
  error: LatchError,
  fallback: string,
): { text: string; detail?: string } {
  const refusal = REFUSALS[error.code]
  if (!refusal) return { text: fallback }
  return refusal.detail ? { text: t(refusal.key), detail: error.message } : { text: t(refusal.key) }
}

/** Room for the title, a call with its calldata wrapped, the fee line and the button; more calls scroll inside the frame. */
const slotHeight = (calls: number) => Math.min(260 + 200 * calls, 560)

/**
 * A step of the flow on screen: lays the frame's review of `batch` over `slot`, delivers the
 * batch's id once the frame sent it, or hands a refusal to `refused`. Returns how to take the
 * review away (the screen leaving); from the frame's question on the click (answered yes while
 * this review is the flow's) until its answer, the flow refuses to close.
 */
const reviewBatch = onFlow(
  (
    flow,
    batch: BatchRequest,
    slot: HTMLElement,
    refused: (r: { text: string; detail?: string }) => void,
  ): (() => void) => {
    let alive = true
    let hide = () => {}
    onBatchSending(() => {
      // Closed already (the close and the click crossed): the caller heard transaction_exited.
      if (!alive || !flow.alive()) return false
      blockClose(flow, true)
      return true
    })
    void (async () => {
      try {
        const frame = await walletFrame()
        const accessToken = await walletAccessToken()
        const review = frame[WALLET_MESSAGES.sendCalls]
        if (!alive) return
        if (!review) throw new Error('The wallet frame cannot show a batch')
        hide = showWalletFrameOver(slot)
        const { id } = await flow.guard(
          review({
            address: usableWallet().address,
            accessToken,
            chainId: batch.chainId,
            calls: batch.calls,
            ...(batch.id && { id: batch.id }),
            locale: locale(),
            colors: frameColors(),
          }),
        )
        blockClose(flow, false)
        hide()
        deliver(flow, id)
        flow.finish()
      } catch (e) {
        blockClose(flow, false)
        if (!alive) return
        hide()
        const failure = toLatchError(e)
        refused(refusalText(failure, walletStepFailed(flow, e, failure.message)))
      }
    })()
    return () => {
      alive = false
      onBatchSending(null)
      hide()
      void walletFrame()
        .then((frame) => frame[WALLET_MESSAGES.dismissApproval]())
        .catch(() => {})
    }
  },
)

export function BatchReview() {
  const batch = useModal((s) => (s.flow?.kind === 'send-transaction' ? s.flow.batch : undefined))
  const slot = useRef<HTMLDivElement>(null)
  const [error, setError] = useState<{ text: string; detail?: string } | null>(null)
  useEffect(() => {
    if (!batch || !slot.current) return
    return reviewBatch(batch, slot.current, setError)
  }, [batch])
  if (!batch) return null
  return (
    <div className="latch-screen" data-testid="screen-EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN">
      {error ? (
        <div role="alert" data-testid="batch-error">
          <p className="latch-error">{error.text}</p>
          {error.detail && <p className="latch-small latch-muted">{error.detail}</p>}
        </div>
      ) : (
        <div
          ref={slot}
          className="latch-wallet-approval"
          data-testid="wallet-batch-slot"
          style={{ height: `${slotHeight(batch.calls.length)}px`, width: '100%' }}
        />
      )}
    </div>
  )
}
