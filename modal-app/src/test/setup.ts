/**
 * The modal-app test project's setup (vite.config.ts, setupFiles): the one teardown every test
 * file gets, so no file needs its own. After each test: every rendered tree unmounted (its
 * effects' cleanups run) and the real clock back. After the file: the screen chunks a test
 * started loading have arrived, and the timers still pending are cleared, before Vitest takes
 * jsdom's globals away; a timer left running would call into a `window` that is gone
 * (teardown.ts), a chunk still loading would fail as the environment closes. Files of the
 * shared DOM project (vite.config.ts, `modal-app-dom`) run one after another in one document,
 * so after each file the document and its storage are put back as a new jsdom has them: no
 * file sees another's elements, attributes, storage, cookies or URL.
 */
import { enScreens } from '@latch/shared/i18n/screens'
import { afterAll, afterEach, vi } from 'vitest'
import { addEnglish } from '../i18n/i18n.ts'
import { resetStore } from '../store.ts'
import { freshDocument } from './fresh-document.ts'
import { trackTimers } from './timers.ts'

// Every root the modal's own modules make is remembered, so unmountAll() reaches those the
// testing library did not make (main.tsx's). A factory runs only where a file imports it.
vi.mock('react-dom/client', async (importOriginal) => {
  const actual = await importOriginal<typeof import('react-dom/client')>()
  const { trackingCreateRoot } = await import('./teardown.ts')
  return { ...actual, createRoot: trackingCreateRoot(actual.createRoot) }
})

const timers = trackTimers()
/** The URL the file started on (jsdom's default unless the project sets one). */
const START_URL = typeof location === 'undefined' ? '' : location.href
// Tests render screens directly, not through their lazy chunks, which bring the screens'
// English in the built modal (screens/lazy.tsx).
addEnglish(enScreens)
// Files in the node environment (`// @vitest-environment node`) render nothing: they skip
// loading the testing library and the renderer.
const dom =
  typeof document === 'undefined'
    ? null
    : {
        ...(await import('./teardown.ts')),
        ...(await import('../screens/lazy.tsx')),
      }

// findBy*/waitFor give up after 1 s by default. A screen's first render may wait for its lazily
// loaded chunk, which Vite transforms on first import: on a busy two-core machine that alone has
// taken over a second. The wait ends as soon as the screen is there, so a longer bound costs a
// passing test nothing; it only turns a slow machine's false failure into a pass.
if (typeof document !== 'undefined') {
  const { configure } = await import('@testing-library/react')
  configure({ asyncUtilTimeout: 5_000 })
}

// Registered before any test file's hooks, so these run after them (Vitest runs after-hooks
// in reverse order): a file's own afterEach still sees its tree mounted.
afterEach(() => {
  dom?.unmountAll()
  vi.useRealTimers()
})

// Bounded by the project's hook timeout, like any hook.
afterAll(async () => {
  dom?.unmountAll()
  vi.useRealTimers()
  await dom?.screensSettled()
  timers.stop()
  timers.restore()
  if (typeof document !== 'undefined') freshDocument(START_URL)
  // Where files share a worker's modules (modal-app-dom, modal-app-node), the next file starts
  // from the store's first state, as in a new module graph.
  resetStore()
})
