/**
 * What a host page on an origin its app does not list hears: the modal server answers its frame
 * with a page that connects to that page only to refuse every call with `origin_not_allowed`,
 * naming the page's origin and the command that adds it. Without it the browser refuses to
 * frame the modal and the page waits out the connection timeout with no reason given.
 */
import { LatchError } from './errors/index.ts'
import type { ModalMethods } from './protocol/host-modal.ts'

/** The refusal, with the origin in its message and the command that adds it in its details. */
export function originNotAllowed(origin: string, appId: string): LatchError {
  return LatchError.of('origin_not_allowed', {
    message: `This origin is not allowed for this app: ${origin}`,
    details: `Add it on the Latch server, then reload the page: npm run latch -- apps update ${appId} --add-origin ${origin}`,
  })
}

/** Modal methods that each reject with `error`: the host SDK's ready, and every call, fail with it. */
export function refusingModal(error: LatchError): ModalMethods {
  const refuse = () => Promise.reject(error)
  // Every method, named: the compiler says when the protocol gains one this page does not refuse.
  const methods: Record<keyof ModalMethods, () => Promise<never>> = {
    init: refuse,
    login: refuse,
    link: refuse,
    unlink: refuse,
    logout: refuse,
    getUser: refuse,
    getAccessToken: refuse,
    close: refuse,
    createWallet: refuse,
    recoverWallet: refuse,
    signMessage: refuse,
    sendTransaction: refuse,
    exportWallet: refuse,
    rpc: refuse,
    chains: refuse,
    signTypedData: refuse,
    forkSession: refuse,
    connectWallet: refuse,
    walletEvent: refuse,
  }
  return methods
}
