/** What the modal may call on the host page: show and size the frame, events, leaving for OAuth. */
import { type HostMethods, LatchError } from '@latch/shared'
import type { WalletBridge } from './bridge/bridge.ts'
import type { Calls } from './calls.ts'
import type { Events } from './events.ts'
import type { Frame } from './frame.ts'
import { savePendingFlow } from './oauth.ts'

/** Loopback hosts may be reached over plain http (local development). */
const isAllowedNavigation = (url: URL) =>
  url.protocol === 'https:' ||
  (url.protocol === 'http:' && /^(localhost|127\.0\.0\.1|\[::1\])$/.test(url.hostname))

/** The host methods of one client; `frame` is absent until the document has been parsed. */
export function createHostMethods(
  frame: () => Frame | undefined,
  events: Events,
  calls: Calls,
  bridge: () => Promise<WalletBridge>,
) {
  return {
    async setOpen(open, label) {
      frame()?.setOpen(open === true, label)
    },
    async resize(height) {
      frame()?.resize(Number(height))
    },
    async emit(event, payload) {
      if (event === 'warning') console.warn(`Latch: ${payload}`)
      events.dispatch(event, payload)
    },
    async navigate(href, flow) {
      let url: URL | undefined
      try {
        url = new URL(href)
      } catch {}
      // A flow the host started, or the open modal (Retry after an OAuth return, whose
      // original login() did not survive the page navigation).
      const flowPending = frame()?.isOpen() || calls.flowPending()
      if (!url || !isAllowedNavigation(url) || !flowPending) {
        throw LatchError.of('invalid_data', { details: 'navigate: refused' })
      }
      // The return is handed to the modal only if this tab saved its flow (oauth.ts).
      savePendingFlow(flow)
      location.href = url.href
    },
    async pageUrl() {
      return location.href
    },
    wallets: () => bridge().then((b) => b.wallets()),
    request: (id, method, params) => bridge().then((b) => b.request(id, method, params)),
  } satisfies HostMethods
}
