/**
 * The wallet frame as the harness serves it: the API answers the built page with its CSP, and
 * inside the modal origin the page loads and starts talking to the modal. The screens that use
 * the frame arrive later; this only proves the build, the serving and the framing line up.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { HOST_ELEMENT_IDS } from '@latch/shared'
import type { Frame } from 'playwright-core'
import { expect, test } from 'vitest'
import { FRONTEND_DIRS } from './build.ts'
import { WAIT_MS } from './harness.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()

const frameUrl = () => `${h().apiUrl}/apps/${h().app.id}/embedded-wallets`

test('behavior: the harness API serves the built wallet frame with its CSP, uncached, naming the modal origin', async () => {
  const res = await fetch(frameUrl(), { signal: AbortSignal.timeout(WAIT_MS) })
  expect(res.status).toBe(200)
  expect(res.headers.get('cache-control')).toBe('no-store')
  const csp = res.headers.get('content-security-policy') ?? ''
  expect(csp).toContain("script-src 'self'")
  expect(csp).toContain("connect-src 'self'")
  expect(csp).toContain(`frame-ancestors ${h().modalUrl} ${h().hostUrl}`)
  const html = await res.text()
  expect(html).toContain(`content="${h().modalUrl}"`)
  // The run's own build (the cache), not whatever wallet-frame/dist holds; its script is
  // served from the API origin too.
  const built = await readFile(join(FRONTEND_DIRS.walletFrame, 'index.html'), 'utf8')
  const scriptOf = (page: string) => /src="(\/embedded-wallets\/assets\/[^"]+\.js)"/.exec(page)?.[1]
  const script = scriptOf(html)
  expect(script).toBeDefined()
  expect(script).toBe(scriptOf(built))
  const js = await fetch(`${h().apiUrl}${script}`, { signal: AbortSignal.timeout(WAIT_MS) })
  expect(js.status).toBe(200)
  expect(js.headers.get('content-type')).toContain('javascript')
})

test('behavior: inside the modal origin the frame loads, runs under its CSP, and greets the modal over penpal', async () => {
  const hp = await h().open()
  const handle = await hp.page.getByTestId(HOST_ELEMENT_IDS.frame).elementHandle()
  const modal: Frame | null | undefined = await handle?.contentFrame()
  if (!modal) throw new Error('no modal frame')
  expect(modal.url().startsWith(h().modalUrl)).toBe(true)
  // The modal's page frames the wallet page the way the wallet screens will, and records what
  // the API origin posts to it.
  await modal.evaluate(
    ({ url, apiOrigin }) => {
      const seen: unknown[] = []
      ;(window as unknown as { walletMessages: unknown[] }).walletMessages = seen
      window.addEventListener('message', (e) => {
        if (e.origin === apiOrigin) seen.push(e.data)
      })
      const iframe = document.createElement('iframe')
      iframe.src = url
      iframe.hidden = true
      document.body.append(iframe)
    },
    { url: frameUrl(), apiOrigin: h().apiUrl },
  )
  await expect
    .poll(
      () =>
        modal.evaluate(() =>
          (window as unknown as { walletMessages: { namespace?: unknown }[] }).walletMessages.some(
            (m) => m?.namespace === 'penpal',
          ),
        ),
      { timeout: WAIT_MS },
    )
    .toBe(true)
  const wallet = hp.page.frames().find((f) => f.url() === frameUrl())
  expect(wallet).toBeDefined()
  // Nothing refused by a CSP, and the frame did not complain about its origin or app id.
  expect(hp.errors.filter((e) => /Content Security Policy|wallet frame/i.test(e))).toEqual([])
})
