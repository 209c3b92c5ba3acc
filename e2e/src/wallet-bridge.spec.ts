/**
 * The host page's wallet bridge with the real modal, across three origins (host page, modal,
 * API): a call made from the modal's origin reaches the browser wallet injected into the host
 * page (test double with a real key), loading /wallet-bridge.js from the modal server on the
 * way; the same call from another origin reaches nothing. The answers' shapes, the error codes
 * and the timeout are in host-sdk/src/bridge/browser.test.ts; the sign-in screens use this
 * path through the modal's landing.
 */
import { HOST_ELEMENT_IDS } from '@latch/shared'
import type { BrowserContext, Frame, Page } from 'playwright-core'
import { afterEach, expect, test } from 'vitest'
import { WAIT_MS } from './harness.ts'
import { type InjectedWallet, injectWallet } from './injected-wallet.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()
const UUID = '0f5e8f4c-3b1d-4f0a-9c1e-6a7b8c9d0e1f'

let context: BrowserContext | undefined

afterEach(async () => {
  await context?.close()
  context = undefined
})

/** A penpal CALL of HostMethods.request, as the modal's penpal sends one. */
const forgedCall = (id: string, method = 'eth_requestAccounts') => ({
  namespace: 'penpal',
  type: 'CALL',
  id,
  methodPath: ['request'],
  args: [UUID, method],
})

async function open(): Promise<{ page: Page; modal: Frame; wallet: InjectedWallet }> {
  context = await h().browser.newContext()
  const wallet = await injectWallet(context, { uuid: UUID, name: 'Test Wallet', legacy: true })
  const { page } = await h().open({ context })
  const handle = await page.getByTestId(HOST_ELEMENT_IDS.frame).elementHandle()
  const modal = await handle?.contentFrame()
  if (!modal) throw new Error('no modal frame')
  return { page, modal, wallet }
}

test('behavior: a call from the modal origin reaches the wallet in the host page, through the bridge the modal server serves', async () => {
  const { page, modal, wallet } = await open()
  // Its first load: each load after a failure has a query of its own (host-sdk create-latch.ts).
  const bridgeUrl = `${h().modalUrl}/wallet-bridge.js?0`
  const loaded = () =>
    page.evaluate(
      (url) => performance.getEntriesByType('resource').some((e) => e.name === url),
      bridgeUrl,
    )
  expect(modal.url().startsWith(h().modalUrl)).toBe(true)
  // Not loaded before the modal asks.
  expect(await loaded()).toBe(false)
  await modal.evaluate((call) => window.parent.postMessage(call, '*'), forgedCall('modal-1'))
  await expect.poll(() => wallet.requests.length, { timeout: WAIT_MS }).toBe(1)
  // The wallet credits the host page, whose origin the visitor sees, not the modal's.
  expect(wallet.requests[0]).toMatchObject({
    method: 'eth_requestAccounts',
    origin: new URL(h().hostUrl).origin,
  })
  expect(await loaded()).toBe(true)
  // The wallet is injected into the top page only, never into the modal's frame.
  expect(await modal.evaluate(() => 'ethereum' in window)).toBe(false)
})

test('error: the same call from a frame of another origin in the host page reaches no wallet', async () => {
  const { page, modal, wallet } = await open()
  await page.evaluate(() => {
    ;(window as unknown as { sentinels: number }).sentinels = 0
    window.addEventListener('message', (e) => {
      if (e.data === 'sentinel') (window as unknown as { sentinels: number }).sentinels++
    })
  })
  // An opaque-origin frame posts the call, then a sentinel: once the sentinel has arrived, the
  // call was delivered before it.
  const script = `parent.postMessage(${JSON.stringify(forgedCall('evil-1'))}, '*'); parent.postMessage('sentinel', '*')`
  await page.evaluate((src) => {
    const iframe = document.createElement('iframe')
    iframe.src = `data:text/html,${encodeURIComponent(`<script>${src}</script>`)}`
    document.body.append(iframe)
  }, script)
  await page.waitForFunction(() => (window as unknown as { sentinels: number }).sentinels === 1)
  // Then the modal's own call (another method, to tell them apart): it arrives after the
  // forged one would have, and it is the only one the wallet saw.
  await modal.evaluate(
    (call) => window.parent.postMessage(call, '*'),
    forgedCall('modal-1', 'eth_chainId'),
  )
  await expect
    .poll(() => wallet.requests.map((r) => r.method), { timeout: WAIT_MS })
    .toContain('eth_chainId')
  expect(wallet.requests.map((r) => r.method)).toEqual(['eth_chainId'])
})
