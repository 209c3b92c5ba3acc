/**
 * A wallet call the API refuses is not the visitor declining: with the session's wallet
 * credential gone (as after a secret rotation that dropped the old secret, or a browser that
 * dropped the cookie), 'Sign and continue' shows 'Sign in again on this device to use your
 * wallet.' and closing then rejects signMessage() with wallet_sign_in_required, not
 * signature_rejected.
 */
import type { Hex } from '@latch/shared'
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
import { useHarness } from './use-harness.ts'
import { createWallet, SCREENS, signThroughScreen } from './wallet-flows.ts'

const h = useHarness()

test('error: the wallet credential refused, signing says to sign in again and the host hears wallet_sign_in_required', async () => {
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
  // The API's wallet credential cookie is gone: every wallet route answers 401.
  await hp.context.clearCookies({ name: /^__Host-latch-w-/ })
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
  const error = sign.getByTestId('sign-error')
  await error.waitFor({ state: 'visible' })
  expect(await error.textContent()).toBe('Sign in again on this device to use your wallet.')
  await hp.modal.getByTestId('close-button').click()
  expect(expectRejected(await settle(signed, 'signMessage()')).code).toBe('wallet_sign_in_required')
})
