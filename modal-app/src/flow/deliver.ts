/**
 * How a wallet request hands its value over (sign, send, export, connect-only, fork): functions
 * over the flow's handle, kept out of flow.ts so that the landing's chunk, at its budget, does
 * not carry what only the wallet requests use.
 */

import { store } from '../store.ts'
import { type Delivered, type FlowHandle, finishFlow, type RunningFlow } from './flow.ts'

export interface DeliverOptions {
  /** The success screen's time before the modal closes itself; without it, it stays open. */
  pauseMs?: number
  /** The modal cannot be closed for this long from now (the key export's display time). */
  blockCloseMs?: number
  /**
   * The caller hears now, not when the modal closes (a signature: nothing the caller needs
   * waits for the success screen); the flow is then no longer pending (requestPending).
   */
  now?: boolean
}

/** The timer that lifts a flow's `blockCloseMs`. */
const unblockTimers = new WeakMap<FlowHandle, ReturnType<typeof setTimeout>>()

/**
 * The flow's answer is `value`: delivered when the modal closes (after `pauseMs` by itself, or
 * by the visitor), or to the caller at once (`now`). Nothing for a flow that has changed.
 * @example deliver(flow, signature, { pauseMs: SUCCESS_CLOSE_DELAY_MS, now: true })
 */
export function deliver(
  handle: FlowHandle,
  value: Delivered,
  { pauseMs, blockCloseMs, now }: DeliverOptions = {},
): void {
  // Every handle is one (flow.ts makes them); the type keeps its bookkeeping from flow code.
  const flow = handle as RunningFlow
  if (!flow.alive()) return
  flow.delivery = { value }
  store.setState({ delivered: true })
  if (blockCloseMs !== undefined) {
    blockClose(flow, true)
    unblockTimers.set(
      flow,
      setTimeout(() => blockClose(flow, false), blockCloseMs),
    )
  }
  if (pauseMs !== undefined) flow.pause(pauseMs, finishFlow)
  if (now) {
    const caller = flow.waiting
    flow.waiting = null
    caller?.resolve(value)
  }
}

/**
 * Whether closing the flow's modal is refused now (a transaction being submitted, the key's
 * display time); the close button shows it. Nothing for a flow that has changed, whose end
 * already lifted it.
 */
export function blockClose(flow: FlowHandle, blocked: boolean): void {
  if (!flow.alive()) return
  clearTimeout(unblockTimers.get(flow))
  store.setState({ closeBlocked: blocked })
}
