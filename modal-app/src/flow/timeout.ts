/**
 * Settles with `promise`, or rejects with `error()` after `ms`; the timer goes either way. Every
 * wait on something outside the modal (the wallet frame, a wallet, a logout hook) goes through
 * it, so none can hang a screen.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, error: () => unknown): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}
