/** The host page's event handlers: what on() adds, off() removes and the modal's emit() reaches. */
import type { LatchClient, LatchOptions } from '@latch/shared'

type Handler = (payload: unknown) => void

export interface Events extends Pick<LatchClient, 'on' | 'off'> {
  /** Runs every handler of `event`; one that throws is reported and does not stop the others. */
  dispatch(event: string, payload: unknown): void
  clear(): void
}

/** The handlers of one client, starting with the options' success callback. */
export function createEvents({ onSuccess, suppressSuccessCallback }: LatchOptions): Events {
  const handlers = new Map<string, Set<Handler>>()
  const events: Events = {
    on(event, handler) {
      handlers.set(event, (handlers.get(event) ?? new Set()).add(handler as Handler))
    },
    off(event, handler) {
      handlers.get(event)?.delete(handler as Handler)
    },
    dispatch(event, payload) {
      for (const handler of [...(handlers.get(event) ?? [])]) {
        try {
          handler(payload)
        } catch (e) {
          console.error(e)
        }
      }
    },
    clear: () => handlers.clear(),
  }
  // The modal emits 'login' as it closes after a sign-in: the success callback's moment.
  if (onSuccess && !suppressSuccessCallback) {
    events.on('login', ({ user, isNewUser }) => onSuccess(user, isNewUser))
  }
  return events
}
