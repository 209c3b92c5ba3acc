/**
 * Wallet events from the host page's bridge (ModalMethods.walletEvent) to the connector that
 * made the request. Kept apart and tiny: methods.ts is in the landing bundle, the connectors
 * are not.
 */
import type { InjectedWalletEvent } from '@latch/shared'

type Handler = (event: InjectedWalletEvent, payload: unknown) => void

const handlers = new Map<string, Set<Handler>>()

/** Hears the events of wallet `id`; answers the unsubscribe. */
export function onWalletEvent(id: string, handler: Handler): () => void {
  const set = handlers.get(id) ?? new Set()
  set.add(handler)
  handlers.set(id, set)
  return () => {
    set.delete(handler)
    if (!set.size) handlers.delete(id)
  }
}

/** ModalMethods.walletEvent: an event of a wallet nobody listens to is dropped. */
export function dispatchWalletEvent(
  id: string,
  event: InjectedWalletEvent,
  payload: unknown,
): void {
  for (const handler of [...(handlers.get(id) ?? [])]) {
    try {
      handler(event, payload)
    } catch (e) {
      console.error(e)
    }
  }
}
