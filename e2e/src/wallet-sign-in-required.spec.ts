/**
 * A wallet call the API refuses for want of the wallet credential (a browser that refused the
 * cookie in the cross-site frame, or a secret rotation that dropped the old secret) is not the
 * visitor declining, and nothing in the flow brings the credential back: the host's promise
 * rejects at once with wallet_sign_in_required, and the modal shows, in place of the screen,
 * what the visitor can do (titled, announced, axe clean) until they close it. Chromium itself
 * refuses a cross-site frame's unpartitioned cookies and keeps the credential: it is Partitioned.
 */
import type { Hex, WalletAccount } from '@latch/shared'
import { expect, test } from 'vitest'
import {
  type CallError,
  expectRejected,
  newEmail,
  type Outcome,
  settle,
  signInByEmail,
  visit,
} from './flows.ts'
import type { HostPage } from './harness.ts'
import { useHarness } from './use-harness.ts'
import { createWallet, SCREENS, signThroughScreen, walletCall } from './wallet-flows.ts'

const h = useHarness()

/** The credential cookie gone from the browser, as if it had refused to keep it. */
const refuseCredential = (hp: HostPage) => hp.context.clearCookies({ name: /^__Host-latch-w-/ })

/** The refused view is on screen, titled and announced, and the visitor closes it. */
async function refusedShownThenClosed(hp: HostPage): Promise<void> {
  await visit(hp, 'wallet-refused')
  const title = 'Your wallet can’t open in this browser'
  expect(await hp.modal.locator('.latch-body h1').textContent()).toBe(title)
  await expect.poll(() => hp.modal.locator('[data-latch-announcer]').textContent()).toBe(title)
  await hp.modal.getByTestId('wallet-refused-close').click()
  await hp.page.waitForFunction(
    () => document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === false,
  )
}

test('error: the credential refused before the wallet exists, createWallet() rejects at once with wallet_sign_in_required and the modal says what to do', async () => {
  const app = await h().createApp({
    embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: false },
  })
  const hp = await h().open({ appId: app.id })
  await signInByEmail(h(), hp, newEmail('refused'))
  await refuseCredential(hp)
  const created = walletCall<WalletAccount>(hp.page, 'createWallet')
  await hp.modal.getByTestId('screen-wallet-refused').waitFor({ state: 'visible' })
  // Settled while the view is still on screen: nobody had to close anything.
  expect(expectRejected(await settle(created, 'createWallet()')).code).toBe(
    'wallet_sign_in_required',
  )
  await refusedShownThenClosed(hp)
})

test('error: the credential refused after the wallet signed, signing rejects at once with wallet_sign_in_required', async () => {
  const app = await h().createApp({
    embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: false },
  })
  const hp = await h().open({ appId: app.id })
  await signInByEmail(h(), hp, newEmail('credential'))
  await createWallet(hp)
  await hp.page.waitForFunction(
    () => document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === false,
  )
  // Signed once: this page's frame holds the share, so the next request goes straight to its
  // screen and the refusal comes at 'Sign and continue'.
  await signThroughScreen(hp, 'First')
  // Chromium keeps the credential because it is Partitioned: in the wallet frame, a cookie
  // without that attribute is refused (third-party cookies are blocked here).
  const walletFrame = hp.page.frames().find((f) => f.url().startsWith(`${h().apiUrl}/`))
  const kept = await walletFrame?.evaluate(() => {
    // biome-ignore lint/suspicious/noDocumentCookie: the two kinds of cookie, written as a frame would
    document.cookie = 'plain=1; Secure; SameSite=None; Path=/'
    // biome-ignore lint/suspicious/noDocumentCookie: the two kinds of cookie, written as a frame would
    document.cookie = 'partitioned=1; Secure; SameSite=None; Path=/; Partitioned'
    return document.cookie
  })
  expect(kept).toContain('partitioned=1')
  expect(kept).not.toContain('plain=1')
  await refuseCredential(hp)
  const signed: Promise<Outcome<Hex>> = hp.page.evaluate(async () => {
    try {
      const latch = window.latch as unknown as { signMessage(m: string): Promise<Hex> }
      return { ok: true as const, value: await latch.signMessage('Hello') }
    } catch (e) {
      const err = e as { code?: string; message?: string; name?: string }
      const error: CallError = {
        code: err.code ?? null,
        message: err.message ?? String(e),
        name: err.name ?? null,
      }
      return { ok: false as const, error }
    }
  })
  await visit(hp, SCREENS.sign)
  const sign = hp.modal.getByTestId(`screen-${SCREENS.sign}`)
  await sign.getByRole('button', { name: 'Sign and continue' }).click()
  await hp.modal.getByTestId('screen-wallet-refused').waitFor({ state: 'visible' })
  expect(expectRejected(await settle(signed, 'signMessage()')).code).toBe('wallet_sign_in_required')
  await refusedShownThenClosed(hp)
})
