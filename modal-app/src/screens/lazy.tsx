/**
 * Screens the landing does not need load as chunks of their own, so the modal's JavaScript
 * before the landing stays small (≤ 90 KB gzip, size.test.ts). They are fetched at the
 * visitor's first interaction with the open modal (App), well before a flow can reach them.
 * A screen shown before its chunk arrived suspends under App's Suspense (the loading view).
 */
import { LatchError } from '@latch/shared'
import { type FunctionComponent, useEffect } from 'react'
import { currentFlow, exitFlow } from '../flow/flow.ts'
import { addEnglish, hasScreensEnglish } from '../i18n/i18n.ts'
import { ErrorView } from './ErrorView.tsx'

export type LazyScreen = FunctionComponent & {
  /** Fetches the screen's chunk; resolves once the screen renders without suspending. */
  preload(): Promise<unknown>
  /** The fetch already asked for, if one is in flight or done; never starts one. */
  pending(): Promise<unknown> | null
}

const lazyScreens: LazyScreen[] = []

/**
 * A screen whose chunk did not load (the network, a deploy that replaced it): the general error
 * view. Leaving the flow now rejects its caller with modal_unreachable, not with the visitor's
 * exit. A browser may keep a module's failed fetch for its URL (Chromium does), so asking again
 * in this page would fail without a request: once the view goes (Close, Escape, Back), the
 * modal's page reloads and fetches its chunks afresh, and the host SDK connects to it again.
 */
function ChunkFailed() {
  useEffect(() => {
    currentFlow().failure = LatchError.of('modal_unreachable')
    return () => {
      exitFlow(true)
      location.reload()
    }
  }, [])
  return <ErrorView />
}

/**
 * A screen component loaded by `load`. A chunk that fails to load renders ChunkFailed, for as
 * long as this page lives.
 */
export function lazyScreen(load: () => Promise<FunctionComponent>): LazyScreen {
  // What renders once the fetch settled: the screen, or the error view after a failure.
  let loaded: FunctionComponent | null = null
  let loading: Promise<FunctionComponent> | null = null
  const fetchScreen = (): Promise<FunctionComponent> => {
    // With the screens' English (the landing carries only its own), in the same round trip.
    loading ??= Promise.all([
      load(),
      hasScreensEnglish() ? null : import('@latch/shared/i18n/screens'),
    ]).then(
      ([screen, english]) => {
        if (english) addEnglish(english.enScreens)
        loaded = screen
        return screen
      },
      (e: unknown) => {
        console.error('Latch: a screen could not load', e)
        loaded = ChunkFailed
        return ChunkFailed
      },
    )
    return loading
  }
  // Made once per screen when the registry loads, as React.lazy does.
  // biome-ignore lint/correctness/noComponentHookFactories: called once per screen at module load (registry.ts), never during a render, so each screen keeps one component identity
  function Lazy() {
    // While suspended, the same promise (no refetch), so a failure cannot retry in a loop.
    // Thrown, as React.lazy does, not passed to use(): React DOM waits for a use()d promise in
    // the render itself, and a render inside a synchronous act() (the testing library's
    // fireEvent) then stays queued on act's queue, which is dropped when act returns, so the
    // screen never rendered in tests. A thrown promise shows the Suspense fallback at once and
    // renders again when it settles, with React DOM and with Preact.
    if (!loaded) throw loading ?? fetchScreen()
    const Screen = loaded
    return <Screen />
  }
  const screen = Object.assign(Lazy, {
    preload: fetchScreen,
    pending: () => loading,
  })
  lazyScreens.push(screen)
  return screen
}

/**
 * Resolves once every chunk already asked for has arrived or failed, asking for none: the
 * tests' teardown waits on it so a preload started by a test does not outlive the test file.
 */
export function screensSettled(): Promise<void> {
  return Promise.all(lazyScreens.map((screen) => screen.pending())).then(() => {})
}

/** Fetches every lazy screen; resolves when all render without suspending. */
export function preloadScreens(): Promise<void> {
  return Promise.all(lazyScreens.map((screen) => screen.preload())).then(() => {})
}
