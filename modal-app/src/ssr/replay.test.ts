import { afterAll, afterEach, beforeEach, expect, test, vi } from 'vitest'
import { resetStore, store } from '../store.ts'
import type { HeldAction } from './before-hydration.ts'
import { replayWhenSignInShows } from './replay.ts'

// jsdom has no CSS.escape (the browser's); the test ids here need none.
vi.stubGlobal('CSS', { escape: (text: string) => text })
afterAll(() => {
  vi.unstubAllGlobals()
})

// Before each test too: a file that ran before this one in the worker's shared document may
// have left the store on the sign-in screen, where a replay would not wait.
const clean = () => {
  document.body.replaceChildren()
  resetStore()
}
beforeEach(clean)
afterEach(clean)

/** A landing's form: its field and what it hears (the value on each input, each submit). */
function landingForm(value = '') {
  const form = document.createElement('form')
  const field = document.createElement('input')
  field.dataset.testid = 'email-input'
  field.value = value
  form.append(field)
  document.body.append(form)
  const heard: string[] = []
  const submitted: string[] = []
  field.addEventListener('input', () => heard.push(field.value))
  form.addEventListener('submit', (e) => {
    e.preventDefault()
    submitted.push(field.value)
  })
  return { field, heard, submitted }
}

const signInShows = () =>
  store.setState({ status: 'ready', screen: 'LANDING', flow: { kind: 'login' } })

test('behavior: a field rendered afresh gets the text typed before, heard as typing, and the held Enter then sends it once', async () => {
  const typedIn = document.createElement('input')
  const { field, heard, submitted } = landingForm()
  const actions: HeldAction[] = [
    { kind: 'type', testId: 'email-input', value: 'ada@example.com', field: typedIn },
    { kind: 'submit', testId: 'email-input' },
  ]
  replayWhenSignInShows(window, actions)
  // Nothing before the sign-in shows.
  await new Promise((resolve) => setTimeout(resolve, 20))
  expect(field.value).toBe('')
  signInShows()
  await vi.waitFor(() => expect(submitted).toEqual(['ada@example.com']))
  expect(heard).toEqual(['ada@example.com'])
  expect(actions).toEqual([])
})

test('behavior: a hydrated field (the one typed in, emptied since) and a field holding text already are left as they are', async () => {
  // Hydrated, then cleared by the visitor: what they did since is theirs.
  const kept = landingForm('')
  const actions: HeldAction[] = [
    { kind: 'type', testId: 'email-input', value: 'ada@exa', field: kept.field },
    { kind: 'submit', testId: 'email-input' },
  ]
  signInShows()
  replayWhenSignInShows(window, actions)
  await vi.waitFor(() => expect(kept.submitted).toEqual(['']))
  expect(kept.heard).toEqual([])
  document.body.replaceChildren()

  const other = landingForm('typed since')
  replayWhenSignInShows(window, [
    {
      kind: 'type',
      testId: 'email-input',
      value: 'before',
      field: document.createElement('input'),
    },
  ])
  await new Promise((resolve) => setTimeout(resolve, 20))
  expect(other.field.value).toBe('typed since')
  expect(other.heard).toEqual([])
})
