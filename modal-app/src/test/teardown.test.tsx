import { render as testingLibraryRender } from '@testing-library/react'
import { useEffect } from 'react'
import { createRoot } from 'react-dom/client'
import { expect, test, vi } from 'vitest'
import { unmountAll } from './teardown.ts'
import { trackTimers } from './timers.ts'

/** Adds a window listener in a passive effect, as App.tsx does, and counts what runs. */
function Listening({ log }: { log: string[] }) {
  useEffect(() => {
    const onFocus = () => {}
    log.push('effect')
    window.addEventListener('focus', onFocus)
    return () => {
      log.push('cleanup')
      window.removeEventListener('focus', onFocus)
    }
  }, [log])
  return <p data-testid="listening">mounted</p>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

test('behavior: a tree rendered outside the testing library (as main.tsx does) is unmounted, its passive cleanup run at once', async () => {
  const container = document.createElement('div')
  document.body.append(container)
  const log: string[] = []
  createRoot(container).render(<Listening log={log} />)
  await vi.waitFor(() => expect(log).toEqual(['effect']), { timeout: 2000 })

  unmountAll()
  // A passive cleanup runs after the commit that unmounts; unmountAll runs it before it returns.
  expect(log).toEqual(['effect', 'cleanup'])
  expect(container.innerHTML).toBe('')
  // Again: nothing is left to unmount, nothing runs twice.
  unmountAll()
  expect(log).toEqual(['effect', 'cleanup'])
  container.remove()
})

test('behavior: a tree unmounted while its first render and effect are still queued never runs the effect', async () => {
  const container = document.createElement('div')
  document.body.append(container)
  const log: string[] = []
  const add = vi.spyOn(window, 'addEventListener')
  createRoot(container).render(<Listening log={log} />)
  // Queued: React DOM renders a root, and then runs its passive effects, on its scheduler's
  // next tasks (a Node timer or message in jsdom), as main.tsx's App after init.
  expect(log).toEqual([])

  unmountAll()
  await sleep(100)
  expect(log).toEqual([])
  expect(add.mock.calls.filter(([type]) => type === 'focus')).toHaveLength(0)
  container.remove()
})

test("behavior: the testing library's trees are unmounted too, their containers taken off the page", () => {
  const log: string[] = []
  const { container } = testingLibraryRender(<Listening log={log} />)
  expect(container.textContent).toBe('mounted')
  unmountAll()
  expect(container.isConnected).toBe(false)
  expect(log).toEqual(['effect', 'cleanup'])
})

test('behavior: the tracker knows the pending timers and intervals; stop clears them before they run', async () => {
  const scope = { setTimeout, clearTimeout, setInterval, clearInterval } as typeof globalThis
  const original = { ...scope }
  const tracker = trackTimers(scope)
  const ran: string[] = []
  try {
    const fired = new Promise<void>((resolve) =>
      scope.setTimeout(() => {
        ran.push('fired')
        resolve()
      }, 1),
    )
    const cleared = scope.setTimeout(() => ran.push('cleared'), 1)
    scope.clearTimeout(cleared)
    // Cleared by the handle's number, as Node also allows.
    scope.clearTimeout(Number(scope.setTimeout(() => ran.push('cleared by number'), 1)))
    scope.setTimeout(() => ran.push('late'), 50)
    scope.setInterval(() => ran.push('interval'), 20)
    expect(tracker.pending()).toBe(3)
    // Awaited through its own callback: the stop below comes before any other timer can run.
    await fired
    expect(ran).toEqual(['fired'])
    expect(tracker.pending()).toBe(2)

    expect(tracker.stop()).toBe(2)
    expect(tracker.pending()).toBe(0)
    await sleep(80)
    expect(ran).toEqual(['fired'])
  } finally {
    tracker.restore()
  }
  expect(scope).toEqual(original)
})
