import type { AllowlistConfig } from '@latch/shared'
import { expect, test } from 'vitest'
import { latchCall, newEmail, screen, signInByEmail, submitEmail, visit } from './flows.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()

const texts = {
  errorTitle: 'Members only, for now',
  errorDetail: 'Ask the team for an invitation.',
  errorCtaText: 'Request an invitation',
  errorCtaLink: 'https://example.com/invite',
} satisfies AllowlistConfig

test('behavior: an address off the allowlist sees the configured texts and gets no code', async () => {
  const invited = newEmail('invited')
  const stranger = newEmail('stranger')
  const app = await h().createApp({
    allowlist: { enabled: true, entries: [invited], config: texts },
  })

  const hp = await h().open({ appId: app.id })
  void latchCall(hp.page, 'login')
  await visit(hp, 'LANDING')
  await submitEmail(hp.modal, stranger)
  await visit(hp, 'ALLOWLIST_REJECTION_SCREEN')
  const rejection = screen(hp.modal, 'ALLOWLIST_REJECTION_SCREEN')
  await rejection.getByText(texts.errorTitle).waitFor({ state: 'visible' })
  await rejection.getByText(texts.errorDetail).waitFor({ state: 'visible' })
  const cta = hp.modal.getByTestId('allowlist-cta')
  await expect(cta.textContent()).resolves.toContain(texts.errorCtaText)
  const href = await cta.evaluate((el) => el.closest('a')?.getAttribute('href') ?? null)
  expect(href).toBe(texts.errorCtaLink)
  // Rejected before any code was sent.
  expect(h().smtp.messages.filter((m) => m.to.toLowerCase() === stranger)).toEqual([])

  // The invited address signs in.
  const result = await signInByEmail(h(), await h().open({ appId: app.id }), invited)
  expect(result.isNewUser).toBe(true)
})
