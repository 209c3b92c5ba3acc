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
 * - the frame's wait ends when the visitor closes the window or after a bound, never later.
 */

const CLOSED_POLL_MS = 400

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
  const onMessage = (event: MessageEvent) => {
    if (event.origin !== location.origin || event.source !== popup || !mine(event.data)) return
    if ((event.data as { type?: unknown }).type === 'ready') popup.postMessage(job, location.origin)
    else hear(event.data)
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
  /** Sends to the opener, at this origin only. */
  send(message: unknown): void
  /** Hears the opener's messages (this origin, the opener only). */
  listen(hear: (data: unknown) => void): void
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
  return {
    nonce,
    root,
    send: (message) => opener.postMessage(message, location.origin),
    listen: (hear) =>
      window.addEventListener('message', (event: MessageEvent) => {
        if (event.origin !== location.origin || event.source !== opener) return
        hear(event.data)
      }),
  }
}
