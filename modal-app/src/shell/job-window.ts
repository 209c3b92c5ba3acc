/**
 * A small window of the modal's own origin, opened on a click for one job (a passkey ceremony,
 * a first-party sign-in) and talking only to the frame that opened it. Both windows follow the
 * same rules, kept here once:
 *
 * - a nonce of 16 random bytes names the job; the frame puts it in the window's address's
 *   fragment (which no server sees) and every message of either end carries it;
 * - messages go to the modal's origin only (`postMessage(…, location.origin)`), and each end
 *   reads only messages from that origin and from the one window it expects (the window its
 *   opener, the window it opened);
 * - the frame's wait ends when the visitor closes the window or after a bound, never later;
 * - the window says 'ready' again until the job arrives, since the frame starts listening only
 *   once it knows the job (after a request of its own), which may be after the window loaded;
 * - the window does not close itself after its answer: the frame closes it once it has read the
 *   answer. Were the window to close itself, the frame's check for a closed window could run
 *   between the close and the answer's delivery, and take a finished job for a cancelled one.
 */

const CLOSED_POLL_MS = 400
/** How often the window repeats 'ready' until the job arrives, and for how long at most. */
const READY_REPEAT_MS = 250
const READY_REPEAT_LIMIT_MS = 60_000
/** How long a finished window waits for the frame to close it before closing itself. */
const FINISHED_CLOSE_MS = 15_000

/** A window opened for one job, with the nonce its messages carry. */
export interface JobWindow {
  window: Window
  nonce: string
}

/**
 * Opens `/?{query}#{nonce}` of this origin as a popup, on the visitor's click, before anything
 * is awaited (a browser lets a page open a window only while the click's activation lasts);
 * null when the browser blocked it.
 */
export function openJobWindow(query: string, name: string, width: number): JobWindow | null {
  const nonce = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) =>
    b.toString(16).padStart(2, '0'),
  ).join('')
  const url = `${location.origin}/?${query}#${nonce}`
  const opened = window.open(url, `${name}-${nonce}`, `popup,width=${width},height=560`)
  return opened ? { window: opened, nonce } : null
}

/**
 * The frame's side of the job: when the window says it is ready (a message of this origin and
 * that window, for which `mine` holds, of type 'ready'), it is sent `job`, at this origin only;
 * `hear` gets each other such message; `gone` runs once when the visitor closed the window or
 * after `ms`. Returns `stop`, which ends the wait and closes the window.
 */
export function watchJobWindow(
  target: JobWindow,
  ms: number,
  job: unknown,
  mine: (data: unknown) => boolean,
  hear: (data: unknown) => void,
  gone: (why: 'closed' | 'timeout') => void,
): () => void {
  const { window: popup } = target
  let sent = false
  const onMessage = (event: MessageEvent) => {
    if (event.origin !== location.origin || event.source !== popup || !mine(event.data)) return
    if ((event.data as { type?: unknown }).type !== 'ready') hear(event.data)
    else if (!sent) {
      sent = true
      popup.postMessage(job, location.origin)
    }
  }
  const stop = () => {
    window.removeEventListener('message', onMessage)
    clearInterval(poll)
    clearTimeout(timer)
    if (!popup.closed) popup.close()
  }
  window.addEventListener('message', onMessage)
  const poll = setInterval(() => {
    if (popup.closed) gone('closed')
  }, CLOSED_POLL_MS)
  const timer = setTimeout(() => gone('timeout'), ms)
  return stop
}

/** The window's side of the job, as it starts. */
export interface JobWindowSide {
  nonce: string
  root: HTMLElement
  /**
   * Hears the opener's messages (this origin, the opener only), and says `ready` to it until
   * the first of them arrives.
   */
  listen(ready: unknown, hear: (data: unknown) => void): void
  /**
   * Sends the job's answer and leaves the window to the frame, which closes it once it has read
   * the answer; closes it itself after FINISHED_CLOSE_MS if the frame did not (it went away).
   */
  finish(message: unknown): void
}

/**
 * The window's side: its nonce, its root and its one channel to its opener; null (and the
 * window closes) when it has no opener, no root or a fragment that is not a nonce.
 */
export function jobWindowSide(): JobWindowSide | null {
  const nonce = location.hash.slice(1)
  const opener = window.opener as Window | null
  const root = document.getElementById('root')
  if (!/^[0-9a-f]{32}$/.test(nonce) || !opener || !root) {
    window.close()
    return null
  }
  // To the opener, at this origin only.
  const send = (message: unknown) => opener.postMessage(message, location.origin)
  return {
    nonce,
    root,
    listen: (ready, hear) => {
      const repeat = setInterval(() => send(ready), READY_REPEAT_MS)
      const limit = setTimeout(() => clearInterval(repeat), READY_REPEAT_LIMIT_MS)
      window.addEventListener('message', (event: MessageEvent) => {
        if (event.origin !== location.origin || event.source !== opener) return
        clearInterval(repeat)
        clearTimeout(limit)
        hear(event.data)
      })
      send(ready)
    },
    finish: (message) => {
      send(message)
      setTimeout(() => window.close(), FINISHED_CLOSE_MS)
    },
  }
}
