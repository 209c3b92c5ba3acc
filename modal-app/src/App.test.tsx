/** The shell's accessibility: focus only while open, titles announced, Tab wraps only in a dialog. */
import { act, fireEvent, screen, waitFor } from '@testing-library/react'
import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest'
import { link } from './flow/entries.ts'
import { login } from './flow/flow.ts'
import { store } from './store.ts'
import { type ApiDouble, startApiDouble } from './test/api-double.ts'
import { frameFocused, renderModal } from './test/harness.tsx'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
afterEach(() => {
  vi.restoreAllMocks()
})

const announcer = () => document.querySelector('[data-latch-announcer]')

test('behavior: the closed (preloaded) modal takes no focus; opening moves none into a frame the host has not focused; the host focusing the frame focuses the first field', () => {
  renderModal(api, { walletAuth: false })
  expect(store.getState().status).toBe('ready')
  // Focus inside the hidden frame would take the host page's keyboard.
  expect(document.activeElement).toBe(document.body)
  frameFocused(false)
  act(() => {
    login().catch(() => {})
  })
  // The host has not shown the frame yet: the page's focus stays where the visitor left it (the
  // host returns it there when the modal closes).
  expect(document.activeElement).toBe(document.body)
  // The host shows the frame and focuses it.
  frameFocused(true)
  act(() => {
    window.dispatchEvent(new FocusEvent('focus'))
  })
  expect(document.activeElement).toBe(screen.getByTestId('email-input'))
  // A screen shown while the frame holds the focus is focused at once.
  act(() => store.setState({ screen: 'LINK_EMAIL_SCREEN' }))
  expect(document.activeElement).toBe(screen.getByTestId('email-input'))
})

test('behavior: each screen title goes to a polite live region inside the dialog', async () => {
  renderModal(api, { walletAuth: false })
  const region = announcer()
  expect(region?.getAttribute('aria-live')).toBe('polite')
  expect(screen.getByRole('dialog').contains(region)).toBe(true)
  expect(region?.textContent).toBe('')
  act(() => {
    login().catch(() => {})
  })
  expect(region?.textContent).toBe('Log in or sign up')
  act(() => store.setState({ screen: 'LINK_EMAIL_SCREEN' }))
  // A lazily loaded screen is announced once it renders.
  await waitFor(() => expect(region?.textContent).toBe('Connect your email'))
})

test('behavior: closing empties the live region, so the next open is announced again', () => {
  renderModal(api, { walletAuth: false })
  act(() => {
    login().catch(() => {})
  })
  expect(announcer()?.textContent).toBe('Log in or sign up')
  act(() => store.setState({ open: false }))
  expect(announcer()?.textContent).toBe('')
})

test('behavior: in a dialog Tab wraps from the last control to the first', () => {
  renderModal(api, { walletAuth: false })
  act(() => {
    login().catch(() => {})
  })
  const input = screen.getByTestId('email-input')
  input.focus()
  // The Submit button is disabled while the field is empty: the field is the last stop.
  const wrapped = !fireEvent.keyDown(input, { key: 'Tab' })
  expect(wrapped).toBe(true)
  expect(document.activeElement).toBe(screen.getByTestId('close-button'))
})

test('behavior: rendered inline Tab is left to the browser, so it can leave the modal', () => {
  renderModal(api, { walletAuth: false }, { render: { inParentNodeId: 'slot' } })
  act(() => {
    link('email').catch(() => {})
  })
  const input = screen.getByTestId('email-input')
  input.focus()
  const wrapped = !fireEvent.keyDown(input, { key: 'Tab' })
  expect(wrapped).toBe(false)
  expect(document.activeElement).toBe(input)
})
