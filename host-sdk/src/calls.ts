/** Every call to the modal in flight, with the error each settles with if the modal goes away. */
import {
  API_TIMEOUT_MS,
  type ErrorCode,
  LatchError,
  type ModalMethods,
  toLatchError,
} from '@latch/shared'

type Rejecter = (error: LatchError) => void
/** What a flow rejects with when the visitor leaves it or the modal goes away. */
export type FlowExit =
  | 'login_exited'
  | 'link_exited'
  | 'create_exited'
  | 'recovery_exited'
  | 'modal_unreachable'
type Run<T> = (remote: ModalMethods) => Promise<T>

export interface Calls {
  /** A quick call: rejects `client_request_timeout` after `timeout` ms (more than 0). */
  invoke<T>(remote: ModalMethods, run: Run<T>, timeout?: number): Promise<T>
  /**
   * A login, link, wallet creation or recovery: no timeout; it lasts until the modal settles it
   * or goes away.
   */
  flow<T>(remote: ModalMethods, run: Run<T>, exit: FlowExit): Promise<T>
  /** Whether a flow is in flight. */
  flowPending(): boolean
  /** The modal went away: every call rejects with its own exit error, or all with `code`. */
  settleAll(code?: ErrorCode): void
}

export function createCalls(): Calls {
  const pending = new Map<Rejecter, ErrorCode>()
  // Marked when they start, so nothing has to guess a flow from its exit error.
  const flows = new Set<Rejecter>()

  /** A call with a timeout (invoke), or a flow, which has none. */
  const track = <T>(
    remote: ModalMethods,
    run: Run<T>,
    exit: ErrorCode,
    timeout?: number,
  ): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined
      const done =
        <V>(fn: (v: V) => void) =>
        (v: V) => {
          clearTimeout(timer)
          pending.delete(fail)
          flows.delete(fail)
          fn(v)
        }
      const fail: Rejecter = done(reject)
      pending.set(fail, exit)
      if (timeout) timer = setTimeout(() => fail(LatchError.of('client_request_timeout')), timeout)
      else flows.add(fail)
      run(remote).then(done(resolve), (e) => fail(toLatchError(e)))
    })

  return {
    invoke: (remote, run, timeout = API_TIMEOUT_MS) =>
      track(remote, run, 'modal_unreachable', timeout),
    flow: (remote, run, exit) => track(remote, run, exit),
    flowPending: () => flows.size > 0,
    settleAll(code) {
      for (const [reject, exit] of pending) reject(LatchError.of(code ?? exit))
    },
  }
}
