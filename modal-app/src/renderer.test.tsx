/**
 * The default build renders with React DOM (renderer.ts), and so does this test project: the
 * components' tests run the renderer that ships by default. The Preact build is checked by
 * size.test.ts and an e2e sign-in (e2e/src/preact-build.spec.ts).
 */
import { act, render, screen } from '@testing-library/react'
import { version as reactVersion } from 'react'
import { version as reactDomVersion } from 'react-dom'
import { afterEach, expect, test } from 'vitest'
import { modalRenderer, PREACT_ALIASES, rendererAliases } from '../renderer.ts'
import { useModal } from './hooks.ts'
import { resetStore, store } from './store.ts'

afterEach(() => resetStore())

test('behavior: the tests run React DOM 19, with no aliases to another renderer', () => {
  expect(reactVersion).toMatch(/^19\./)
  expect(reactDomVersion).toBe(reactVersion)
})

function OpenState() {
  return <p data-testid="open-state">{useModal((s) => (s.open ? 'open' : 'closed'))}</p>
}

test('behavior: the testing library renders with React DOM, and a store change re-renders through it', () => {
  render(<OpenState />)
  const element = screen.getByTestId('open-state')
  // React DOM keeps its fiber on each element it renders (a `__reactFiber$…` key); Preact never.
  expect(Object.keys(element).some((key) => key.startsWith('__reactFiber$'))).toBe(true)
  expect(element.textContent).toBe('closed')
  act(() => store.setState({ open: true }))
  expect(element.textContent).toBe('open')
})

test('behavior: LATCH_MODAL_RENDERER picks the build: React unless preact, a misspelling refused', () => {
  expect(modalRenderer({})).toBe('react')
  expect(modalRenderer({ LATCH_MODAL_RENDERER: '' })).toBe('react')
  expect(modalRenderer({ LATCH_MODAL_RENDERER: 'react' })).toBe('react')
  expect(modalRenderer({ LATCH_MODAL_RENDERER: ' Preact ' })).toBe('preact')
  expect(() => modalRenderer({ LATCH_MODAL_RENDERER: 'preact/compat' })).toThrow(
    /must be react or preact/,
  )
  expect(rendererAliases('react')).toEqual([])
  expect(rendererAliases('preact')).toBe(PREACT_ALIASES)
  // Every React entry point the modal, zustand and the testing library import has a Preact one.
  const aliased = (id: string) => PREACT_ALIASES.some((a) => a.find.test(id))
  for (const id of ['react', 'react/jsx-runtime', 'react-dom', 'react-dom/client']) {
    expect(aliased(id)).toBe(true)
  }
})
