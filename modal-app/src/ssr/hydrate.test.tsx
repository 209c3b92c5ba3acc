import { act, cleanup } from '@testing-library/react'
import type { Root } from 'react-dom/client'
import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest'
import { initialize, login } from '../flow/flow.ts'
import { serveCurrentState } from '../hooks.ts'
import { resetStore } from '../store.ts'
import { type ApiDouble, startApiDouble } from '../test/api-double.ts'
import { serverConfig } from '../test/fixtures.ts'
import { setupRuntime } from '../test/harness.tsx'
import { BEFORE_HYDRATION_KEY, type BeforeHydration } from './before-hydration.ts'
import { hydrateLanding } from './hydrate.tsx'
import { renderLanding } from './render.tsx'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())

type HoldingWindow = Window & { [BEFORE_HYDRATION_KEY]?: BeforeHydration }

let unmount: (() => void) | undefined
afterEach(() => {
  unmount?.()
  unmount = undefined
  delete (window as HoldingWindow)[BEFORE_HYDRATION_KEY]
  document.body.replaceChildren()
  cleanup()
  resetStore()
  vi.restoreAllMocks()
})

/**
 * The page as the modal server sends it: the landing rendered for this app (wallet login listed
 * first, as the server's default), its store set up from the same input as the page's own
 * (hydrate.tsx), a held-actions record whose `stop` marks the moment React takes the events over.
 */
async function serverRenderedPage() {
  const server = serverConfig()
  const landing = await renderLanding(server, {}, 'en')
  if (!landing) throw new Error('no landing rendered')
  // The page's modules start afresh (the server's are another process's): the served state is
  // the store's initial one until the page sets it.
  resetStore()
  serveCurrentState()
  setupRuntime(api)
  initialize(server, {})
  const root = document.createElement('div')
  root.id = 'root'
  root.innerHTML = landing.html
  document.body.append(root)
  let taken!: () => void
  const takenOver = new Promise<void>((resolve) => {
    taken = resolve
  })
  ;(window as HoldingWindow)[BEFORE_HYDRATION_KEY] = { actions: [], stop: () => taken() }
  const warnings = vi.spyOn(console, 'warn').mockImplementation(() => {})
  const renderedAfresh = () =>
    warnings.mock.calls.some((args) => String(args[0]).includes('rendered client-side'))
  return { root, takenOver, renderedAfresh }
}

/**
 * Hydrates the page; `meanwhile` runs once React has taken the events over and before its
 * hydration has rendered (act holds React's work until its callback is done, then runs it all).
 */
async function hydrateWith(root: HTMLElement, takenOver: Promise<void>, meanwhile: () => void) {
  let hydrated!: Promise<Root>
  await act(async () => {
    hydrated = hydrateLanding(window, root)
    await takenOver
    meanwhile()
  })
  // Unmounted after the test: a root left mounted would go on rendering from the store, which
  // the next test (or the next file in this worker) resets.
  const made = await hydrated
  unmount = () => act(() => made.unmount())
}

test("behavior: the host's login() arriving while React hydrates the server's landing does not make it render the landing afresh", async () => {
  const { root, takenOver, renderedAfresh } = await serverRenderedPage()
  const served = root.querySelector('[data-testid="section-email-toggle"]')
  expect(served).not.toBeNull()
  // The host's login() lands before React's hydration has run: the modal opens its flow.
  await hydrateWith(root, takenOver, () => {
    login().catch(() => {})
  })
  expect(renderedAfresh()).toBe(false)
  // The elements the server sent are the ones React took over.
  expect(root.querySelector('[data-testid="section-email-toggle"]')).toBe(served)
  // And the update was applied once hydrated: the open modal's wallet section asks for wallets.
  await vi.waitFor(() =>
    expect(root.querySelector('[data-testid="screen-LANDING"]')?.textContent).not.toContain(
      'Looking for wallets',
    ),
  )
})

test("behavior: a click on a section's toggle while React hydrates, after the host's login(), opens that section", async () => {
  const { root, takenOver, renderedAfresh } = await serverRenderedPage()
  await hydrateWith(root, takenOver, () => {
    login().catch(() => {})
    // React hears the click itself now (the inline script stopped holding): it hydrates first.
    root.querySelector<HTMLButtonElement>('[data-testid="section-email-toggle"]')?.click()
  })
  expect(renderedAfresh()).toBe(false)
  const toggle = root.querySelector('[data-testid="section-email-toggle"]')
  expect(toggle?.getAttribute('aria-expanded')).toBe('true')
  expect(root.querySelector('[data-testid="email-input"]')).not.toBeNull()
})
