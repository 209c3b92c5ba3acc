/**
 * One end of the connector frame's MessagePort (frame-protocol.ts), on either side: calls out
 * with a timeout each, calls in through a checked dispatch, and the frame's events. A message
 * that fails its side's checks is dropped; a call without an answer in time fails.
 */
import type { CallMessage, ReplyMessage } from './frame-protocol.ts'

export interface PortEnd {
  /** Sends a call; rejects with the reply's error, or `timeout()` when none comes in `ms`. */
  call(method: string, args: unknown, ms: number, timeout: () => Error): Promise<ReplyMessage>
  /** Stops: pending calls fail with `reason`, later messages are dropped. */
  close(reason: Error): void
}

export interface PortHandlers {
  /** Checks a message as a reply (frame-protocol.ts); null drops it. */
  parseReply(data: unknown): ReplyMessage | null
  /** Checks a message as a call to this side; null drops it. */
  parseCall(data: unknown): CallMessage | null
  /** Answers a call: its value, or a thrown error as the reply's error. */
  onCall(call: CallMessage): Promise<unknown>
  /** Any other message (the frame's events); dropped when absent. */
  onOther?(data: unknown): void
  /** Sent with each reply (the frame's provider state). */
  state?(): unknown
}

const errorOf = (e: unknown): { code?: number; message: string } => {
  const record = typeof e === 'object' && e !== null ? (e as Record<string, unknown>) : {}
  const message = typeof record.message === 'string' ? record.message : String(e)
  const code = Number.isSafeInteger(record.code) ? (record.code as number) : undefined
  return { message: message.slice(0, 500), ...(code === undefined ? {} : { code }) }
}

export function portEnd(port: MessagePort, handlers: PortHandlers): PortEnd {
  let nextId = 1
  let closed: Error | null = null
  const pending = new Map<number, { resolve(r: ReplyMessage): void; reject(e: Error): void }>()
  port.onmessage = (event: MessageEvent) => {
    if (closed) return
    const data: unknown = event.data
    const reply = handlers.parseReply(data)
    if (reply) {
      const waiting = pending.get(reply.id)
      pending.delete(reply.id)
      waiting?.resolve(reply)
      return
    }
    const call = handlers.parseCall(data)
    if (call) {
      const reply = (fields: Record<string, unknown>) => {
        if (closed) return
        const state = handlers.state?.()
        port.postMessage({ t: 'reply', id: call.id, ...fields, ...(state ? { state } : {}) })
      }
      handlers.onCall(call).then(
        (value) => reply({ ok: true, value }),
        (e: unknown) => reply({ ok: false, error: errorOf(e) }),
      )
      return
    }
    handlers.onOther?.(data)
  }
  port.start()
  return {
    call(method, args, ms, timeout) {
      if (closed) return Promise.reject(closed)
      const id = nextId++
      return new Promise<ReplyMessage>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id)
          reject(timeout())
        }, ms)
        pending.set(id, {
          resolve: (r) => {
            clearTimeout(timer)
            resolve(r)
          },
          reject: (e) => {
            clearTimeout(timer)
            reject(e)
          },
        })
        port.postMessage({ t: 'call', id, method, args })
      })
    },
    close(reason) {
      closed = reason
      for (const waiting of pending.values()) waiting.reject(reason)
      pending.clear()
      port.onmessage = null
      port.close()
    },
  }
}
