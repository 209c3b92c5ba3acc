import { act, screen } from '@testing-library/react'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { login, navigate } from '../flow/flow.ts'
import { preloadScreens } from '../screens/lazy.tsx'
import { type ApiDouble, startApiDouble } from '../test/api-double.ts'
import { renderModal } from '../test/harness.tsx'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())

test('error: javascript: links in the app configuration are not rendered', async () => {
  renderModal(api, {
    walletAuth: false,
    termsAndConditionsUrl: 'javascript:alert(1)',
    privacyPolicyUrl: ' JavaScript:alert(2)',
    allowlistConfig: {
      errorTitle: null,
      errorDetail: null,
      errorCtaText: 'Join',
      errorCtaLink: 'javascript:alert(3)',
    },
  })
  act(() => {
    login().catch(() => {})
  })
  expect(screen.getByTestId('email-input')).toBeTruthy()
  expect(screen.queryByTestId('legal')).toBeNull()
  await act(async () => {
    await preloadScreens()
    navigate('ALLOWLIST_REJECTION_SCREEN')
  })
  // No link at all: the button back to the landing instead.
  const cta = screen.getByTestId('allowlist-cta')
  expect(cta.tagName).toBe('BUTTON')
  expect(cta.getAttribute('href')).toBeNull()
  expect(document.querySelector('[href^="javascript" i], [href*="alert"]')).toBeNull()
})

test('behavior: an http(s) link beside a refused one still shows', () => {
  renderModal(api, {
    termsAndConditionsUrl: 'HTTPS://acme.test/terms',
    privacyPolicyUrl: 'data:text/html,<script>alert(1)</script>',
  })
  act(() => {
    login().catch(() => {})
  })
  expect(screen.getByTestId('terms-link').getAttribute('href')).toBe('HTTPS://acme.test/terms')
  expect(screen.queryByTestId('privacy-link')).toBeNull()
})
