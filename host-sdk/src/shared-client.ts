/**
 * One Latch client per app and modal on a page, shared by whoever asks for it: `<LatchProvider>`
 * and the wagmi connector (`@latch/wagmi`) of the same app then drive one modal frame, one
 * session and one set of events. Two clients would mount two frames that each sign in and out on
 * their own, so a wagmi account could outlive the React user it belongs to.
 *
 * The table lives on `globalThis` under a registered symbol, not in this module: each package
 * (@latch/react, @latch/wagmi) bundles its own copy of this file, and copies must still find
 * each other's clients. Not part of the script-tag SDK (sdk.js) nor of latch.js: a subpath
 * (`@latch/host-sdk/shared-client`) only the framework packages import.
 */
import type { LatchClient, LatchOptions } from '@latch/shared'
import { createLatch } from './create-latch.ts'

interface Entry {
  client: LatchClient
  refs: number
  timer: ReturnType<typeof setTimeout> | undefined
}

const KEY = Symbol.for('dev.latch.clients')

function table(): Map<string, Entry> {
  const scope = globalThis as { [KEY]?: Map<string, Entry> }
  scope[KEY] ??= new Map()
  return scope[KEY]
}

/** The key of a client: the app and where its modal lives (without a trailing slash). */
export const clientKey = (options: Pick<LatchOptions, 'appId' | 'modalUrl'>): string =>
  `${options.appId} ${(options.modalUrl ?? '').replace(/\/+$/, '')}`

export interface SharedClient {
  client: LatchClient
  /** Gives this holder's share back; the client is destroyed once no holder is left. */
  release(): void
}

/**
 * The page's client for this app and modal, created on first use with these options (a later
 * holder's `config` and callbacks are not applied: the first one's stand). Call only in the
 * browser: it mounts the modal frame.
 *
 * Destruction waits a task after the last release, so React's StrictMode, which runs an
 * effect, its cleanup and the effect again in one go, keeps the one client instead of making a
 * second frame.
 */
export function acquireLatch(options: LatchOptions): SharedClient {
  const key = clientKey(options)
  const clients = table()
  let entry = clients.get(key)
  if (!entry) {
    entry = { client: createLatch(options), refs: 0, timer: undefined }
    clients.set(key, entry)
  }
  const held = entry
  clearTimeout(held.timer)
  held.timer = undefined
  held.refs += 1
  let released = false
  return {
    client: held.client,
    release() {
      if (released) return
      released = true
      held.refs -= 1
      if (held.refs > 0) return
      held.timer = setTimeout(() => {
        if (held.refs > 0 || clients.get(key) !== held) return
        clients.delete(key)
        held.client.destroy()
      }, 0)
    },
  }
}
