/**
 * A new sign-in method for a user whose wallet recovers automatically: before the modal's link
 * request, the visitor approves that very method in the wallet frame ("Let … sign in to your
 * account and open your wallet?"), whose own request records it for the server
 * (server/src/accounts/link-approval.ts). The modal shows the frame's approval in place of the
 * screen and waits; closing the modal leaves the link undone. Loaded only for such a user.
 */
import {
  CODE_ROUTE_PATHS,
  LatchError,
  type LinkApprovalMethod,
  OAUTH_PROVIDER_NAMES,
} from '@latch/shared'
import { useModal } from '../hooks.ts'
import { t } from '../i18n/i18n.ts'
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

/** Approval of the method a link request to `path` with `body` adds (nothing to approve: none). */
export async function approveLinkOf(path: string, body: Record<string, string>): Promise<void> {
  const flow = store.getState().flow
  const method = linkMethodOf(path, body, flow?.kind === 'link' ? flow.account : undefined)
  if (method) await approveLink(method.method, method.label)
}

/**
 * The kind and identifier of the method a link request adds, which the frame names on its own and
 * the server binds the approval to; and the modal's name for it, which is not sent to the frame.
 */
function linkMethodOf(
  path: string,
  body: Record<string, string>,
  account: string | undefined,
): { method: { type: LinkApprovalMethod; identifier: string }; label: string } | null {
  if (path === CODE_ROUTE_PATHS.email && body.email) {
    return { method: { type: 'email', identifier: body.email }, label: body.email }
  }
  if (path === CODE_ROUTE_PATHS.sms && body.phoneNumber) {
    return { method: { type: 'phone', identifier: body.phoneNumber }, label: body.phoneNumber }
  }
  if (path === '/siwe' && body.message) {
    // EIP-4361: the address is the message's second line.
    const address = body.message.split('\n')[1]?.trim() ?? ''
    return { method: { type: 'siwe', identifier: address }, label: address }
  }
  if (path === '/passkeys') {
    return { method: { type: 'passkey', identifier: 'passkey' }, label: '' }
  }
  if (path === '/oauth' && account && account in OAUTH_PROVIDER_NAMES) {
    const name = OAUTH_PROVIDER_NAMES[account as keyof typeof OAUTH_PROVIDER_NAMES]
    return { method: { type: 'oauth', identifier: account }, label: name }
  }
  return null
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
        method={approval.method}
        onDone={() => waiting?.resolve()}
        onRefused={(error) => waiting?.reject(error)}
      />
    </div>
  )
}
