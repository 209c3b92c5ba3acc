/**
 * The device share between the two pages of the wallet origin. Where the browser refuses the
 * frame storage (a cross-site deployment), the device share lives only in the memory of the
 * wallet frame; the export page (export.ts) is another document of the same origin and asks it
 * over a BroadcastChannel, which reaches only documents of this origin in the same storage
 * partition (the API origin serves no other pages). Nothing crosses to the modal.
 */
import type { Hex } from '@latch/shared'
import { fromHex, toHex } from './keys.ts'
import type { ShareStore } from './wallet.ts'

const CHANNEL = 'latch:wallet:device-share'

interface Ask {
  kind: 'ask'
  id: string
  address: string
}
interface Give {
  kind: 'give'
  id: string
  share: string
}

/** In the wallet frame: answers asks for a share this frame holds; returns the stop function. */
export function answerShareAsks(store: ShareStore): () => void {
  if (typeof BroadcastChannel === 'undefined') return () => {}
  const channel = new BroadcastChannel(CHANNEL)
  channel.onmessage = (e: MessageEvent<unknown>) => {
    const ask = e.data as Partial<Ask> | null
    if (ask?.kind !== 'ask' || typeof ask.id !== 'string' || typeof ask.address !== 'string') {
      return
    }
    const share = store.get(ask.address)
    if (!share) return
    channel.postMessage({ kind: 'give', id: ask.id, share: toHex(share) } satisfies Give)
    share.fill(0)
  }
  return () => channel.close()
}

/** In the export page: the device share of `address` from a wallet frame, or undefined. */
export function askDeviceShare(address: Hex, timeoutMs = 3000): Promise<Uint8Array | undefined> {
  if (typeof BroadcastChannel === 'undefined') return Promise.resolve(undefined)
  const channel = new BroadcastChannel(CHANNEL)
  const id = toHex(crypto.getRandomValues(new Uint8Array(16)))
  return new Promise<Uint8Array | undefined>((resolve) => {
    const done = (share: Uint8Array | undefined) => {
      clearTimeout(timer)
      channel.close()
      resolve(share)
    }
    const timer = setTimeout(() => done(undefined), timeoutMs)
    channel.onmessage = (e: MessageEvent<unknown>) => {
      const give = e.data as Partial<Give> | null
      if (give?.kind === 'give' && give.id === id && typeof give.share === 'string') {
        done(fromHex(give.share))
      }
    }
    channel.postMessage({ kind: 'ask', id, address } satisfies Ask)
  })
}
