/**
 * The Node timers a test file started and left pending, for the test setup (setup.ts) to clear
 * before Vitest takes jsdom's globals away: one left running would call into a `window` that is
 * gone. Apart from teardown.ts so that files in the node environment need no DOM library.
 */

type Handle = ReturnType<typeof setTimeout>

export interface TimerTracker {
  /** Timers and intervals started since `trackTimers()` and neither fired (timers) nor cleared. */
  pending(): number
  /** Clears every pending one; returns how many there were. */
  stop(): number
  /** Puts the original functions back. */
  restore(): void
}

/**
 * Wraps the global `setTimeout` and `setInterval` (Node's: jsdom's own timers die with its
 * window, these do not) to know which are still pending, so the setup can clear them before
 * the environment goes. Vitest's own timers are taken before setup files run and are not
 * seen. Fake timers installed later wrap these wrappers and put them back on
 * `vi.useRealTimers()`.
 */
export function trackTimers(scope: typeof globalThis = globalThis): TimerTracker {
  // Keyed by the handle's number: Node's clearTimeout also takes that.
  const live = new Map<number, Handle>()
  const original = {
    setTimeout: scope.setTimeout,
    clearTimeout: scope.clearTimeout,
    setInterval: scope.setInterval,
    clearInterval: scope.clearInterval,
  }
  const forget = (handle: Parameters<typeof clearTimeout>[0]) => {
    if (handle !== undefined && handle !== null) live.delete(Number(handle))
  }
  const timeout = (callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const handle: Handle = original.setTimeout(
      (...values: unknown[]) => {
        live.delete(Number(handle))
        callback(...values)
      },
      ms,
      ...args,
    )
    live.set(Number(handle), handle)
    return handle
  }
  const interval = (callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const handle: Handle = original.setInterval(callback, ms, ...args)
    live.set(Number(handle), handle)
    return handle
  }
  scope.setTimeout = Object.assign(timeout, original.setTimeout) as typeof setTimeout
  scope.setInterval = Object.assign(interval, original.setInterval) as typeof setInterval
  scope.clearTimeout = ((handle) => {
    forget(handle)
    original.clearTimeout(handle)
  }) as typeof clearTimeout
  scope.clearInterval = ((handle) => {
    forget(handle)
    original.clearInterval(handle)
  }) as typeof clearInterval
  return {
    pending: () => live.size,
    stop() {
      const count = live.size
      // clearTimeout and clearInterval are the same for Node's handles.
      for (const handle of live.values()) original.clearTimeout(handle)
      live.clear()
      return count
    },
    restore() {
      Object.assign(scope, original)
    },
  }
}
