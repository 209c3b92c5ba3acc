/**
 * The cold open's floor, served beside the real servers by cold-open-servers.ts for `npm run
 * bench -- frames --cold-only --floor`: what an open costs the browser with none of Latch's
 * JavaScript (see `startFloor`).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { FRAME_CSS, HOST_ELEMENT_IDS } from '@latch/shared'
import { landingQuery } from '../host-sdk/src/landing-query.ts'

/** The floor's host page and its frame's origin. */
export interface FloorUrls {
  hostUrl: string
  modalUrl: string
}

/** What the floor's host page carries, so that the bench's probe expects no `window.latch`. */
export const FLOOR_MARKER = 'latch-bench-floor'

/** Serves one page on 127.0.0.1, named `name` in its URL (as the real servers are); its URL. */
async function servePage(name: string, html: string): Promise<{ url: string; close(): void }> {
  const server = createServer((req, res) => {
    if (req.url === '/favicon.ico') {
      res.writeHead(404).end()
      return
    }
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      .end(html)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://${name}:${port}`,
    close: () => {
      server.close()
      server.closeAllConnections()
    },
  }
}

/**
 * The floor: what an open costs the browser with none of Latch's JavaScript. The integrator's
 * plain page with, in place of the one-line script, the dialog already open around the frame
 * (the SDK's own CSS), and in the frame the modal server's rendered landing page as this app's
 * frame gets it, every script and module preload taken out. Each on an origin of its own, on
 * the same hosts as the real pair (another site each, as in production). The real open minus
 * this one is what Latch's scripts, messages and show add.
 */
export async function startFloor(
  hostUrl: string,
  modalUrl: string,
  appId: string,
): Promise<{ floor: FloorUrls; close(): void }> {
  const get = async (url: string) => {
    const res = await fetch(url, { headers: { referer: `${hostUrl}/` } })
    if (!res.ok) throw new Error(`the floor: ${url} answered ${res.status}`)
    return res.text()
  }
  const plain = await get(`${hostUrl}/plain`)
  const landing = await get(`${modalUrl}/?app=${appId}${landingQuery()}`)
  if (!landing.includes('data-latch-ssr')) {
    throw new Error('the floor: the modal server did not render the landing')
  }
  const frame = await servePage(
    new URL(modalUrl).hostname,
    landing
      .replace(/<script\b[\s\S]*?<\/script>/g, '')
      .replace(/<link rel="modulepreload"[^>]*>/g, ''),
  )
  const scriptLine = /<script src="[^"]*\/sdk\.js"[^>]*><\/script>/
  if (!scriptLine.test(plain)) throw new Error('the floor: the plain page has no script line')
  const host = await servePage(
    new URL(hostUrl).hostname,
    plain
      .replace('<head>', `<head><meta name="${FLOOR_MARKER}">`)
      .replace(
        scriptLine,
        () =>
          `<style>${FRAME_CSS}</style><dialog class="latch-d" open><iframe class="latch-f" style="height:320px" data-testid="${HOST_ELEMENT_IDS.frame}" src="${frame.url}/"></iframe></dialog>`,
      ),
  )
  return {
    floor: { hostUrl: `${host.url}/`, modalUrl: frame.url },
    close: () => {
      host.close()
      frame.close()
    },
  }
}
