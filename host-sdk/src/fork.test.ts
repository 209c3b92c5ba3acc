import type { PendingOAuthFlow } from '@latch/shared'
import { afterEach, expect, test } from 'vitest'
import { PENDING_FLOW_KEY, savePendingFlow, takeOAuthReturn } from './oauth.ts'

// A session fork's token arrives on the host URL as latch_fork (the wallet app's in-app
// browser opens the page with it); takeOAuthReturn hands it to init as its fourth argument.

afterEach(() => {
  history.replaceState(null, '', '/')
  sessionStorage.clear()
})

test('behavior: latch_fork is taken off the address bar and handed on, the rest of the address kept', () => {
  history.replaceState({ keep: 1 }, '', '/shop?item=7&latch_fork=AbC-_9&b=2#pay')
  expect(takeOAuthReturn()).toEqual([undefined, undefined, 'AbC-_9', undefined])
  expect(location.pathname).toBe('/shop')
  expect(location.search).toBe('?item=7&b=2')
  expect(location.hash).toBe('#pay')
  expect(history.state).toEqual({ keep: 1 })
  // Gone for good: a second read (a reload) finds nothing.
  expect(takeOAuthReturn()).toEqual([])
})

test('behavior: a fork token does not consume a saved OAuth flow', () => {
  const flow: PendingOAuthFlow = {
    state: 'st',
    provider: 'google',
    intent: 'login',
    secret: 's'.repeat(43),
  }
  savePendingFlow(flow)
  history.replaceState(null, '', '/?latch_fork=tok')
  expect(takeOAuthReturn()).toEqual([undefined, undefined, 'tok', undefined])
  expect(sessionStorage.getItem(PENDING_FLOW_KEY)).not.toBeNull()
})

test('behavior: with an OAuth return, both come along', () => {
  const flow: PendingOAuthFlow = {
    state: 'st',
    provider: 'google',
    intent: 'login',
    secret: 's'.repeat(43),
  }
  savePendingFlow(flow)
  history.replaceState(
    null,
    '',
    '/?latch_oauth_code=c&latch_oauth_state=st&latch_oauth_provider=google&latch_fork=tok',
  )
  expect(takeOAuthReturn()).toEqual([{ code: 'c', state: 'st', provider: 'google' }, flow, 'tok'])
  expect(location.search).toBe('')
})

test('error: an empty latch_fork is removed, and the modal ignores it', () => {
  history.replaceState(null, '', '/?latch_fork=&x=1')
  expect(takeOAuthReturn()[2]).toBe('')
  expect(location.search).toBe('?x=1')
})
