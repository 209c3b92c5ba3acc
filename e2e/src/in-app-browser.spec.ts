import { type MockProviders, startMockProviders } from '@latch/server/testing'
import type { LoginResult, ServerAppConfig } from '@latch/shared'
import type { BrowserContext } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { expectModalAccessible } from './axe.ts'
import {
  enterCode,
  expectOk,
  latchCall,
  newEmail,
  settle,
  submitEmail,
  visit,
  waitEmailCode,
} from './flows.ts'
import { WAIT_MS } from './harness.ts'
import { useHarness } from './use-harness.ts'

// Instagram's in-app browser, as its user agent reads on each platform.
const INSTAGRAM = {
  ios: 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 357.0.0.25.101 (iPhone16,2; iOS 18_1_1; en_US; en; scale=3.00; 1290x2796; 664937563; IABMV/1)',
  android:
    'Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/130.0.6723.107 Mobile Safari/537.36 Instagram 355.0.0.36.107 Android (34/14; 480dpi; 1080x2340; samsung; SM-S918B; dm3q; qcom; en_US; 659227658)',
} as const

const h = useHarness()
let mock: MockProviders
let app: ServerAppConfig
const contexts: BrowserContext[] = []

beforeAll(async () => {
  // Google and Apple configured (the stand-in provider), so a normal browser would offer them.
  mock = await startMockProviders()
  app = await h().createApp({
    loginMethods: ['email', 'google', 'apple', 'discord'],
    oauth: mock.settings(),
  })
})
afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => {})
  await mock?.stop()
})

describe('in-app browsers', () => {
  test.each(['ios', 'android'] as const)(
    'behavior: Instagram on %s: no Google or Apple button, the open-in-browser step copies the page link (e-mail sign-in works on Android)',
    async (platform) => {
      const context = await h().browser.newContext({
        userAgent: INSTAGRAM[platform],
        permissions: ['clipboard-read', 'clipboard-write'],
      })
      contexts.push(context)
      const hp = await h().open({ appId: app.id, context })
      const pending = latchCall<LoginResult>(hp.page, 'login')
      await visit(hp, 'LANDING')

      const step = hp.modal.getByRole('region', { name: 'Open in your browser' })
      await step.waitFor({ state: 'visible' })
      expect(await hp.modal.getByTestId('social-google').count()).toBe(0)
      expect(await hp.modal.getByTestId('social-apple').count()).toBe(0)
      expect(await hp.modal.getByTestId('social-discord').isVisible()).toBe(true)
      const link = hp.modal.getByRole('textbox', { name: 'Link to this page' })
      const page = hp.page.url()
      await expect.poll(() => link.inputValue(), { timeout: WAIT_MS }).toBe(page)

      const intent = hp.modal.getByRole('link', { name: 'Open in browser' })
      if (platform === 'android') {
        const url = new URL(page)
        expect(await intent.getAttribute('href')).toBe(
          `intent://${url.host}${url.pathname}${url.search}#Intent;scheme=http;end`,
        )
      } else {
        expect(await intent.count()).toBe(0)
      }

      await hp.modal.getByRole('button', { name: 'Copy link' }).click()
      await expect
        .poll(() => hp.modal.getByTestId('open-in-browser-status').textContent(), {
          timeout: WAIT_MS,
        })
        .toBe('Link copied')
      expect(await hp.page.evaluate(() => navigator.clipboard.readText())).toBe(page)
      await expectModalAccessible(hp.page, `the open-in-browser step (${platform})`)

      // E-mail still signs the visitor in there (once: the path is the same on both).
      if (platform === 'ios') return
      const email = newEmail(`in-app-${platform}`)
      await submitEmail(hp.modal, email)
      const code = await waitEmailCode(h(), email)
      await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
      await enterCode(hp.modal, code)
      const result = expectOk(await settle(pending, 'login()'))
      expect(result.user.email?.address).toBe(email)
    },
    90_000,
  )
})
