/**
 * A new sign-in method for a user whose wallet recovers automatically: before the modal's link
 * request, the visitor approves that very method in the wallet frame ("Let … sign in to your
 * account and open your wallet?"), whose own request records it for the server
 * (server/src/accounts/link-approval.ts). The modal shows the frame's approval in place of the
 * screen and waits; closing the modal leaves the link undone. Loaded only for such a user.
 */
import { LatchError, type LinkApprovalMethod } from '@latch/shared'
import { useModal } from '../hooks.ts'
import { t } from '../i18n.ts'
import { store } from '../store.ts'
import { WalletApproval } from './approval.tsx'

let waiting: { resolve(): void; reject(e: unknown): void } | null = null

/** Resolves once the visitor approved `method` in the wallet frame. */
export function approveLink(
  method: { type: LinkApprovalMethod; identifier: string },
  label: string,
): Promise<void> {
  waiting?.reject(LatchError.of('link_exited'))
  store.setState({ linkApproval: { method, label } })
  return new Promise<void>((resolve, reject) => {
    waiting = { resolve, reject }
  }).finally(() => {
    waiting = null
    store.setState({ linkApproval: null })
  })
}

/** In place of the screen while an approval waits. */
export function LinkApprovalView() {
  const approval = useModal((s) => s.linkApproval)
  if (!approval) return null
  return (
    <div className="latch-screen latch-center" data-testid="link-approval">
      <h1 className="latch-title">{t('apLinkTitle')}</h1>
      <WalletApproval
        kind="link"
        label={approval.label || t('apPasskey')}
        method={approval.method}
        onDone={() => waiting?.resolve()}
      />
    </div>
  )
}
