/** Messages received by a test double, and waiting for the next code sent to someone. */

export interface ReceivedMessage {
  to: string
  body: string
  at: Date
}

const CODE = /\b(\d{6})\b/

/** The six-digit code in a text, if any. */
export function findCode(text: string): string | undefined {
  return CODE.exec(text)?.[1]
}

export class Inbox<M extends ReceivedMessage> {
  readonly messages: M[] = []
  #taken = new WeakSet<M>()
  #waiters: Array<() => void> = []

  push(message: M): void {
    this.messages.push(message)
    for (const wake of this.#waiters.splice(0)) wake()
  }

  /**
   * The code of the oldest message to `to` not returned before; waits for one up to
   * `timeoutMs` and then throws.
   */
  async waitForCode(to: string, opts: { timeoutMs?: number } = {}): Promise<string> {
    const timeoutMs = opts.timeoutMs ?? 10_000
    const want = to.trim().toLowerCase()
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const message = this.messages.find(
        (m) => !this.#taken.has(m) && m.to.toLowerCase() === want && findCode(m.body),
      )
      if (message) {
        this.#taken.add(message)
        return findCode(message.body) as string
      }
      const left = deadline - Date.now()
      if (left <= 0) {
        throw new Error(
          `No code for ${to} within ${timeoutMs} ms (${this.messages.length} messages seen)`,
        )
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left)
        const wake = (): void => {
          clearTimeout(timer)
          resolve()
        }
        function done(): void {
          const i = waiters.indexOf(wake)
          if (i >= 0) waiters.splice(i, 1)
          resolve()
        }
        const waiters = this.#waiters
        waiters.push(wake)
      })
    }
  }
}
