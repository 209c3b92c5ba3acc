/** What the demo host page (and the foreign page) put on `window`, as the specs see it. */
import type { LatchClient, LoginResult } from '@latch/shared'

declare global {
  interface Window {
    /** Created by the one-line script (or by the inline page's module script). */
    latch?: LatchClient
    /** The demo page records every 'login' event's payload here (demo.js). */
    latchLogins?: LoginResult[]
    /** Specs record 'login' events here. */
    logins?: LoginResult[]
    /** Specs record other events here by name. */
    events?: string[]
    /** The foreign page: every message a frame sent back to it. */
    replies?: { origin: string; data: unknown }[]
    /** The foreign page: posts penpal-shaped handshakes and calls to every reachable frame. */
    attack?: (methods: string[]) => number
  }
}
