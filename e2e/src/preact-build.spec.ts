/**
 * The Preact build (`LATCH_MODAL_RENDERER=preact`, modal-app/renderer.ts) is a documented option
 * the rest of the suite does not run: one sign-in on it, so it cannot stop working unnoticed.
 */
import type { LoginResult } from '@latch/shared'
import { describe, expect, test } from 'vitest'
import {
  demoUser,
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

const h = useHarness({ modalRenderer: 'preact' })

/** The modal page's module script, as the modal server serves it. */
async function modalEntryScript(modalUrl: string): Promise<string> {
  const signal = AbortSignal.timeout(WAIT_MS)
  const html = await (await fetch(`${modalUrl}/`, { signal })).text()
  const src = /<script type="module"[^>]*src="([^"]+)"/.exec(html)?.[1]
  if (!src) throw new Error('the modal page has no module script')
  return (await fetch(new URL(src, modalUrl), { signal })).text()
}

describe('the Preact build of the modal', () => {
  test('behavior: the modal served is the Preact build, and a new visitor signs in by e-mail on it', async () => {
    const script = await modalEntryScript(h().modalUrl)
    // preact/compat's event name for React's onDoubleClick; React's production errors link react.dev.
    expect(script).toContain('ondoubleclick')
    expect(script).not.toContain('react.dev/errors')

    const hp = await h().open()
    const email = newEmail('preact')
    const pending = latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    // React DOM keeps its fiber on each element it renders (`__reactFiber$…`); Preact does not.
    const field = hp.modal.getByTestId('email-input')
    expect(await field.evaluate((el) => Object.keys(el).some((k) => k.startsWith('__react')))).toBe(
      false,
    )
    await submitEmail(hp.modal, email)
    const code = await waitEmailCode(h(), email)
    await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
    await enterCode(hp.modal, code)
    const result = expectOk(await settle(pending, 'login()'))
    expect(result.isNewUser).toBe(true)
    expect(result.user.email?.address).toBe(email)
    expect((await demoUser(hp.page, (u) => u?.email?.address === email))?.id).toBe(result.user.id)
  })
})
