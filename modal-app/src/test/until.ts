import { act } from '@testing-library/react'
import type { vi } from 'vitest'

/**
 * Waits for `condition` without timers (setImmediate turns), so tests that fake setTimeout
 * without letting real time move it can still wait for real I/O (the API double's socket).
 * Gives up after `turns` turns of the event loop.
 */
export async function until(condition: () => boolean, turns = 20_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (condition()) return
    await act(() => new Promise<void>((resolve) => setImmediate(resolve)))
  }
  throw new Error('until: the condition did not hold in time')
}

/** Fakes the clock of the screens' timers only: real time does not move it. */
export const FAKE_TIMERS: Parameters<typeof vi.useFakeTimers>[0] = {
  toFake: ['setTimeout', 'clearTimeout'],
}
