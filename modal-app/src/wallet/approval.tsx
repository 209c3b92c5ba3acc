/**
 * A screen's place for an approval the wallet frame draws (wallet-frame/src/approval.ts): the
 * modal asks the frame to SHOW it and lays the frame's iframe over this slot, where the screen's
 * buttons would be. The visitor's click inside the frame does it; the modal only hears that it
 * was done. Leaving the screen takes the approval away.
 */
import {
  type LatchError,
  type LinkApprovalMethod,
  toLatchError,
  WALLET_MESSAGES,
  type WalletApprovalKind,
} from '@latch/shared'
import { useEffect, useRef, useState } from 'react'
import { currentFlow } from '../flow/flow.ts'
import { locale } from '../i18n/i18n.ts'
import { runtime } from '../runtime.ts'
import { frameColors } from './export.ts'
import { showWalletFrameOver, walletFrame } from './frame.ts'

export interface WalletApprovalProps {
  kind: WalletApprovalKind
  /**
   * `link`: the new method, which the frame names from this alone (no caption of the modal's)
   * and the server binds the approval to.
   */
  method?: { type: LinkApprovalMethod; identifier: string }
  /** The visitor's click in the frame did it. */
  onDone?: () => void
  /**
   * The wallet API refused this browser's wallet credential: the flow is refused (its caller
   * hears wallet_sign_in_required at once, the modal says what to do); `onRefused` ends what
   * waited on the approval.
   */
  onRefused?: (error: LatchError) => void
}

/** Room for the frame's text, input, button and status line. */
const SLOT_HEIGHT_PX = 190

export function WalletApproval({ kind, method, onDone, onRefused }: WalletApprovalProps) {
  const slot = useRef<HTMLDivElement>(null)
  const done = useRef(onDone)
  done.current = onDone
  const refused = useRef(onRefused)
  refused.current = onRefused
  const [error, setError] = useState<string | null>(null)
  const type = method?.type
  const identifier = method?.identifier
  useEffect(() => {
    let alive = true
    let hide = () => {}
    const flow = currentFlow()
    void (async () => {
      try {
        const frame = await walletFrame()
        const accessToken = await runtime().session.getAccessToken()
        if (!alive || !slot.current) return
        if (!accessToken) throw new Error('Signed out')
        hide = showWalletFrameOver(slot.current)
        await frame[WALLET_MESSAGES.approval]({
          accessToken,
          kind,
          locale: locale(),
          colors: frameColors(),
          ...(type && identifier ? { method: { type, identifier } } : {}),
        })
        if (alive) done.current?.()
      } catch (e) {
        if (!alive) return
        const error = toLatchError(e)
        // No click in the frame brings the credential back.
        if (error.is('wallet_sign_in_required')) {
          flow.refuse(error)
          refused.current?.(error)
          return
        }
        setError(error.message)
      }
    })()
    return () => {
      alive = false
      hide()
      void walletFrame()
        .then((frame) => frame[WALLET_MESSAGES.dismissApproval]())
        .catch(() => {})
    }
  }, [kind, type, identifier])
  return (
    <>
      <div
        ref={slot}
        className="latch-wallet-approval"
        data-testid="wallet-approval-slot"
        style={{ height: `${SLOT_HEIGHT_PX}px`, width: '100%' }}
      />
      {error ? (
        <p className="latch-error" role="alert" data-testid="wallet-approval-error">
          {error}
        </p>
      ) : null}
    </>
  )
}
