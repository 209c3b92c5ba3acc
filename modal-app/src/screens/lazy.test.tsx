import { act, render, screen } from '@testing-library/react'
import { type FunctionComponent, Suspense } from 'react'
import { afterEach, expect, test, vi } from 'vitest'
import { LoadingView } from './LoadingView.tsx'
import { lazyScreen } from './lazy.tsx'

const Done = () => <p data-testid="done">done</p>

/** Renders inside act, so React's retry after a suspension runs (as it does in a browser). */
async function show(Screen: FunctionComponent) {
  let view: ReturnType<typeof render> | undefined
  await act(async () => {
    view = render(
      <Suspense fallback={<LoadingView />}>
        <Screen />
      </Suspense>,
    )
  })
  return view as ReturnType<typeof render>
}

afterEach(() => {
  vi.restoreAllMocks()
})

test('behavior: a preloaded screen renders without the loading view; a cold one shows it until loaded', async () => {
  const load = vi.fn(async () => Done)
  const Preloaded = lazyScreen(load)
  await Preloaded.preload()
  const first = render(
    <Suspense fallback={<LoadingView />}>
      <Preloaded />
    </Suspense>,
  )
  // Synchronously there: no suspension at all.
  expect(screen.getByTestId('done')).toBeTruthy()
  expect(screen.queryByTestId('screen-loading')).toBeNull()
  first.unmount()
  expect(load).toHaveBeenCalledTimes(1)

  let resolve: (c: FunctionComponent) => void = () => {}
  const Cold = lazyScreen(() => new Promise((r) => (resolve = r)))
  await show(Cold)
  expect(screen.getByTestId('screen-loading')).toBeTruthy()
  await act(async () => resolve(Done))
  expect(screen.getByTestId('done')).toBeTruthy()
  expect(screen.queryByTestId('screen-loading')).toBeNull()
})

test('error: a chunk that fails to load shows the general error view for as long as the page lives: in this page it is not asked for again', async () => {
  const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
  const load = vi.fn().mockRejectedValueOnce(new Error('network')).mockResolvedValue(Done)
  const Flaky = lazyScreen(load)
  await Flaky.preload()
  const view = await show(Flaky)
  expect(screen.getByTestId('screen-error')).toBeTruthy()
  expect(errors).toHaveBeenCalledWith('Latch: a screen could not load', expect.any(Error))
  // Leaving the view reloads the modal's page (jsdom cannot; the browser's own run is
  // e2e/src/close-modal.spec.ts), which alone asks again: a browser may keep the failed fetch.
  view.unmount()
  await Flaky.preload()
  expect(load).toHaveBeenCalledTimes(1)
  await show(Flaky)
  expect(screen.getByTestId('screen-error')).toBeTruthy()
})
