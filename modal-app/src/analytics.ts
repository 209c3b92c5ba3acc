/** Analytics events: POSTed to /analytics_events and reported to the host page. */
import type { AnalyticsEventName } from '@latch/shared'
import { callHost, runtime } from './runtime.ts'
import { safeLocalStorage } from './token-store.ts'

const CLIENT_ID_KEY = 'latch-client-id'
let memoryClientId: string | null = null

/** A random id for this browser, kept in the modal origin's storage. */
export function clientId(): string {
  const storage = safeLocalStorage()
  try {
    const stored = storage?.getItem(CLIENT_ID_KEY)
    if (stored) return stored
  } catch {
    // Blocked storage: an id for this page's life.
  }
  memoryClientId ??= crypto.randomUUID()
  try {
    storage?.setItem(CLIENT_ID_KEY, memoryClientId)
  } catch {
    // Same as above.
  }
  return memoryClientId
}

/** Records an event; never fails the flow that records it. */
export function track(event: AnalyticsEventName, payload: Record<string, unknown> = {}): void {
  const body = {
    event_name: event,
    client_id: clientId(),
    payload: { ...payload, clientTimestamp: new Date().toISOString() },
  }
  callHost('emit', event, body.payload)
  runtime()
    .api.request('/analytics_events', body)
    .catch(() => {})
}
