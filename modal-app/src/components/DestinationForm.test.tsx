/**
 * The e-mail and phone fields say why a malformed value is refused: once the visitor pauses
 * typing (INPUT_CHECK_PAUSE_MS) or presses Enter, in the visitor's language, spoken from a live
 * region the field is described by, with aria-invalid; never at every keystroke.
 */
import { ERRORS } from '@latch/shared'
import { en } from '@latch/shared/i18n'
import { TABLES } from '@latch/shared/i18n/all'
import { enScreens } from '@latch/shared/i18n/screens'
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react'
import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest'
import { login } from '../flow/flow.ts'
import { applyLocale, setTable } from '../i18n/i18n.ts'
import { type ApiDouble, startApiDouble } from '../test/api-double.ts'
import { renderModal } from '../test/harness.tsx'
import { INPUT_CHECK_PAUSE_MS } from './DestinationForm.tsx'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
afterEach(() => {
  cleanup()
  vi.useRealTimers()
  setTable({ ...enScreens, ...en }, 'en')
  api.requests.length = 0
})

function open(channel: 'email' | 'phone'): HTMLInputElement {
  renderModal(api, {
    walletAuth: false,
    smsAuth: channel === 'phone',
    emailAuth: channel === 'email',
  })
  act(() => {
    login().catch(() => {})
  })
  return screen.getByTestId(`${channel}-input`) as HTMLInputElement
}

const typeInto = (input: HTMLInputElement, value: string) =>
  fireEvent.change(input, { target: { value } })

const advance = (ms: number) =>
  act(() => {
    vi.advanceTimersByTime(ms)
  })

/** The field's message, read through its aria-describedby, as a screen reader gets it. */
function described(input: HTMLInputElement): string {
  const ids = (input.getAttribute('aria-describedby') ?? '').split(' ')
  return ids.map((id) => document.getElementById(id)?.textContent ?? '').join(' | ')
}

test('behavior: a malformed e-mail says why after a 1 s pause, not while typing; a valid one clears it at once', () => {
  vi.useFakeTimers({ shouldAdvanceTime: true })
  const input = open('email')
  const problem = screen.getByTestId('email-problem')
  // The live region is there before the message, so the message is spoken when it comes.
  expect(problem.getAttribute('aria-live')).toBe('polite')
  typeInto(input, 'ada@example')
  advance(INPUT_CHECK_PAUSE_MS - 100)
  expect(problem.textContent).toBe('')
  expect(input.getAttribute('aria-invalid')).toBeNull()
  // Another keystroke starts the pause again.
  typeInto(input, 'ada@example.')
  advance(INPUT_CHECK_PAUSE_MS - 100)
  expect(problem.textContent).toBe('')
  advance(100)
  expect(problem.textContent).toBe(ERRORS.invalid_email.message)
  expect(ERRORS.invalid_email.message).toBe('Please enter a valid email address')
  expect(input.getAttribute('aria-invalid')).toBe('true')
  expect(described(input)).toContain(ERRORS.invalid_email.message)
  typeInto(input, 'ada@example.com')
  expect(problem.textContent).toBe('')
  expect(input.getAttribute('aria-invalid')).toBeNull()
  expect((screen.getByTestId('email-submit') as HTMLButtonElement).disabled).toBe(false)
})

test('behavior: Enter on a malformed e-mail says why at once and sends nothing', () => {
  const input = open('email')
  typeInto(input, 'not-an-address')
  fireEvent.keyDown(input, { key: 'Enter' })
  fireEvent.submit(input.form as HTMLFormElement)
  expect(screen.getByTestId('email-problem').textContent).toBe(ERRORS.invalid_email.message)
  expect(api.calls('POST /passwordless/init')).toHaveLength(0)
})

test('behavior: an empty field says nothing', () => {
  vi.useFakeTimers({ shouldAdvanceTime: true })
  const input = open('email')
  typeInto(input, 'a')
  typeInto(input, '')
  fireEvent.keyDown(input, { key: 'Enter' })
  advance(INPUT_CHECK_PAUSE_MS * 2)
  expect(screen.getByTestId('email-problem').textContent).toBe('')
})

test('behavior: a malformed phone number says why after the pause', async () => {
  const input = open('phone')
  // The phone check loads with the first phone form.
  await waitFor(() => {
    typeInto(input, '415 555 0132')
    expect((screen.getByTestId('phone-submit') as HTMLButtonElement).disabled).toBe(false)
  })
  vi.useFakeTimers({ shouldAdvanceTime: true })
  typeInto(input, '415 555')
  advance(INPUT_CHECK_PAUSE_MS)
  expect(screen.getByTestId('phone-problem').textContent).toBe(ERRORS.invalid_phone.message)
  expect(input.getAttribute('aria-invalid')).toBe('true')
})

test('param: the message is in the visitor’s language', async () => {
  await applyLocale({ locale: 'de' })
  const input = open('email')
  typeInto(input, 'ada@')
  fireEvent.keyDown(input, { key: 'Enter' })
  expect(screen.getByTestId('email-problem').textContent).toBe(TABLES.de.e.invalid_email)
  expect(TABLES.de.e.invalid_email).not.toBe(ERRORS.invalid_email.message)
})
