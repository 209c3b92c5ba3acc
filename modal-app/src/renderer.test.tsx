/**
 * The modal ships with Preact behind React's API (renderer.ts); the test project uses the same
 * aliases, so every component test here runs the renderer that ships.
 */
import { act, cleanup, render, screen } from '@testing-library/react'
import { options, type VNode } from 'preact'
import { afterEach, expect, test } from 'vitest'
import { useModal } from './hooks.ts'
import { resetStore, store } from './store.ts'

afterEach(() => {
  cleanup()
  resetStore()
})

test("behavior: React's entry points are Preact's in the tests, as in the build", async () => {
  const compat = await import('preact/compat')
  expect(await import('react')).toBe(compat)
  expect(await import('react-dom')).toBe(compat)
  expect((await import('react-dom/client')).createRoot).toBe(
    (await import('preact/compat/client')).createRoot,
  )
  expect((await import('react/jsx-runtime')).jsx).toBe((await import('preact/jsx-runtime')).jsx)
})

test('behavior: the testing library renders with Preact, and a store change re-renders through it', () => {
  function OpenState() {
    return <p data-testid="open-state">{useModal((s) => (s.open ? 'open' : 'closed'))}</p>
  }
  // options.diffed is Preact's hook after each element it renders: React would never call it.
  const rendered: string[] = []
  const previous = options.diffed
  options.diffed = (vnode: VNode) => {
    if (vnode.type === OpenState) rendered.push(screenText())
    previous?.(vnode)
  }
  const screenText = () => screen.queryByTestId('open-state')?.textContent ?? ''
  try {
    render(<OpenState />)
    act(() => store.setState({ open: true }))
    expect(screenText()).toBe('open')
    expect(rendered).toEqual(['closed', 'open'])
  } finally {
    options.diffed = previous
  }
})
