/** Analytics events: POSTed to /analytics_events and reported to the host page. */
import type { AnalyticsEventName } from '@latch/shared'
import { callHost, runtime } from '../runtime.ts'
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

/** How long a recorded event may wait for an idle moment before it is sent anyway. */
export const ANALYTICS_IDLE_TIMEOUT_MS = 2000

/**
 * Runs `task` when the page is idle (within `ANALYTICS_IDLE_TIMEOUT_MS`). Idle callbacks run in
 * the order they were asked for, so events reach the API in the order they happened.
 */
function whenIdle(task: () => void): void {
  if (typeof requestIdleCallback === 'function') {
    requestIdleCallback(task, { timeout: ANALYTICS_IDLE_TIMEOUT_MS })
  } else {
    setTimeout(task, 1)
  }
}

/**
 * Records an event; never fails the flow that records it. The host hears of it at once; the
 * POST waits for an idle moment: 'sdk_initialize' and 'modal_open' are recorded on the way to
 * the first screen, where starting a cross-origin request would take a phone's main thread
 * between the landing's render and its showing.
 */
export function track(event: AnalyticsEventName, payload: Record<string, unknown> = {}): void {
  const body = {
    event_name: event,
    client_id: clientId(),
    payload: { ...payload, clientTimestamp: new Date().toISOString() },
  }
  callHost('emit', event, body.payload)
  const { api } = runtime()
  whenIdle(() => {
    api.request('/analytics_events', body).catch(() => {})
  })
}
