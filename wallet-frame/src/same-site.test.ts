// @vitest-environment node
/**
 * The recommended deployment in Chromium: host page, modal and API on subdomains of one site.
 * The wallet frame is same-site with the page, the browser lets it store its device share,
 * and a reload finds the wallet usable without any recovery.
 */
import { afterAll, beforeAll, expect, test, vi } from 'vitest'
import { startWalletHarness, type WalletHarness } from './test/harness.ts'

vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 })

let h: WalletHarness
beforeAll(async () => {
  h = await startWalletHarness({ sameSite: true })
})
afterAll(async () => {
  await h?.close()
})

test('behavior: same-site deployment — the device share persists across reloads; no recovery is needed', async () => {
  const page = await h.browser.newPage()
  // The host page embeds the modal, which embeds the frame: three subdomains of example.test.
  const inHost = async () => {
    await page.goto(
      `${h.hostOrigin}/host?modal=${encodeURIComponent(h.modalUrl(h.modalOrigin, 15_000))}`,
    )
    let frame = page.frames().find((f) => f.url().startsWith(h.modalOrigin))
    for (let i = 0; !frame && i < 50; i++) {
      await page.waitForTimeout(100)
      frame = page.frames().find((f) => f.url().startsWith(h.modalOrigin))
    }
    if (!frame) throw new Error('the modal stand-in did not load')
    await frame.waitForFunction(() => 'call' in window, undefined, { timeout: 10_000 })
    return frame
  }
  let modal = await inHost()
  const auth = await h.signIn(modal, `same-site.${Date.now()}@example.com`)
  expect((await h.call(modal, 'latch:iframe:ready')).ok).toEqual({ persistent: true })
  const created = await h.call(modal, 'latch:wallet:create', { accessToken: auth.token })
  expect(created.error).toBeUndefined()
  const address = created.ok?.address as string
  expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/)

  modal = await inHost()
  expect((await h.call(modal, 'latch:iframe:ready')).ok).toEqual({ persistent: true })
  expect(
    (await h.call(modal, 'latch:wallet:connect', { address, accessToken: auth.token })).ok,
  ).toEqual({ address })
  await page.close()
})
