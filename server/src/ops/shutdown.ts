/** Graceful shutdown of a node:http server, bounded by a deadline. */
import type { Server } from 'node:http'

/** How long `latch serve` lets in-flight requests finish after SIGTERM (LATCH_SHUTDOWN_TIMEOUT_MS). */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000

/**
 * Stops accepting connections at once, lets requests under way finish and closes each
 * keep-alive connection as soon as it is idle; whatever is still open at the deadline is cut.
 * Resolves with whether everything finished in time.
 */
export function closeGracefully(server: Server, deadlineMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    let finished = false
    const done = (inTime: boolean) => {
      if (finished) return
      finished = true
      clearInterval(sweep)
      clearTimeout(cut)
      resolve(inTime)
    }
    // close() stops the listener; its callback runs once the last connection has ended.
    server.close(() => done(true))
    // A keep-alive connection that finishes its request becomes idle after close() was called:
    // end those as they appear instead of waiting for the client.
    server.closeIdleConnections()
    const sweep = setInterval(() => server.closeIdleConnections(), 50)
    const cut = setTimeout(() => {
      server.closeAllConnections()
      done(false)
    }, deadlineMs)
  })
}
