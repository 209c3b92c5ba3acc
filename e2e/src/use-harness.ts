/** The vitest side of the harness: one per spec file, a fresh browser context per test. */
import { afterAll, afterEach, beforeAll } from 'vitest'
import { type Harness, type HarnessOptions, startHarness } from './harness.ts'

/**
 * One harness per spec file: started before the first test, its browser contexts closed after
 * each test, everything stopped after the last.
 * @example const h = useHarness(); test('...', async () => { const { page } = await h().open() })
 */
export function useHarness(options: HarnessOptions = {}): () => Harness {
  let harness: Harness | undefined
  beforeAll(async () => {
    harness = await startHarness(options)
  })
  afterEach(async () => {
    await harness?.closeContexts()
  })
  afterAll(async () => {
    await harness?.close()
  })
  return () => {
    if (!harness) throw new Error('the harness did not start (see the beforeAll error)')
    return harness
  }
}
