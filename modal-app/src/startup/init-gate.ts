/**
 * The host SDK sends its calls (login above all) right behind `init` instead of waiting for
 * init's reply: on a phone's first open that saves a message hop between the two frames. So
 * every method but `init` waits here until init settled, and fails with init's own error when
 * init failed, exactly as if the host had waited for the reply itself. Penpal delivers the
 * host's messages in order, so init is always the first to arrive; a call that came before any
 * init would wait for it.
 */
import type { ModalMethods } from '@latch/shared'

type Method = (...args: never[]) => Promise<unknown>

export function holdUntilInit(
  methods: ModalMethods,
  /** Called once, when the first init settled (either way). */
  onFirstSettled: () => void = () => {},
): ModalMethods {
  let firstInit: (settled: Promise<unknown>) => void = () => {}
  // Follows the first init once it arrives, then the latest one (a host retrying after a
  // timeout).
  let settled = new Promise<unknown>((resolve) => {
    firstInit = resolve
  })
  // Once the first init replaced it, nothing may be left waiting on it: its failure is init's
  // own, answered to the host by init itself.
  settled.catch(() => {})
  const held: Record<string, Method> = {}
  for (const [name, fn] of Object.entries(methods as unknown as Record<string, Method>)) {
    held[name] = (...args) => settled.then(() => fn(...args))
  }
  let first = true
  held.init = (...args: Parameters<ModalMethods['init']>) => {
    const result = methods.init(...args)
    if (first) {
      first = false
      result.then(onFirstSettled, onFirstSettled)
    }
    firstInit(result)
    settled = result
    return result
  }
  return held as unknown as ModalMethods
}
