import type { PendingOAuthFlow } from '@latch/shared'
import { afterEach, expect, test, vi } from 'vitest'
import { FORK_QUERY_WARNING, PENDING_FLOW_KEY, savePendingFlow, takeOAuthReturn } from './oauth.ts'

// A session fork's token arrives in the host URL's fragment as latch_fork (the wallet app's
// in-app browser opens the page with it); takeOAuthReturn hands it to init as its fourth
// argument. In the query it is refused as leaked.

afterEach(() => {
  history.replaceState(null, '', '/')
  sessionStorage.clear()
})

test('behavior: latch_fork is taken off the fragment and handed on, the rest of the address kept', () => {
  history.replaceState({ keep: 1 }, '', '/shop?item=7&b=2#latch_fork=AbC-_9')
  expect(takeOAuthReturn()).toEqual([undefined, undefined, 'AbC-_9', undefined])
  expect(location.pathname).toBe('/shop')
  expect(location.search).toBe('?item=7&b=2')
  expect(location.hash).toBe('')
  expect(location.href.endsWith('#')).toBe(false)
  expect(history.state).toEqual({ keep: 1 })
  // Gone for good: a second read (a reload) finds nothing.
  expect(takeOAuthReturn()).toEqual([])
})

test('behavior: the page own fragment stays, an anchor or a hash route', () => {
  history.replaceState(null, '', '/shop#pay&latch_fork=tok')
  expect(takeOAuthReturn()[2]).toBe('tok')
  expect(location.hash).toBe('#pay')
  history.replaceState(null, '', '/#/cart?x=1&latch_fork=tok2')
  expect(takeOAuthReturn()[2]).toBe('tok2')
  expect(location.hash).toBe('#/cart?x=1')
  // A fragment without our token is left alone.
  history.replaceState(null, '', '/#/cart?latch_forks=1')
  expect(takeOAuthReturn()).toEqual([])
  expect(location.hash).toBe('#/cart?latch_forks=1')
})

test('refusal: a token in the query is removed, never handed on, and reported as leaked', () => {
  const onLeak = vi.fn()
  history.replaceState(null, '', '/shop?item=7&latch_fork=AbC-_9')
  expect(takeOAuthReturn(onLeak)).toEqual([undefined, undefined, undefined, undefined])
  expect(location.search).toBe('?item=7')
  expect(onLeak).toHaveBeenCalledTimes(1)
  // Both at once: the fragment's is used, the query's still reported.
  const again = vi.fn()
  history.replaceState(null, '', '/?latch_fork=q#latch_fork=f')
  expect(takeOAuthReturn(again)[2]).toBe('f')
  expect(location.href).toBe(`${location.origin}/`)
  expect(again).toHaveBeenCalledTimes(1)
  expect(FORK_QUERY_WARNING).toBe('Ignored a session link: its token was in the address query')
})

test('behavior: a fork token does not consume a saved OAuth flow', () => {
  const flow: PendingOAuthFlow = {
    state: 'st',
    provider: 'google',
    intent: 'login',
    secret: 's'.repeat(43),
  }
  savePendingFlow(flow)
  history.replaceState(null, '', '/#latch_fork=tok')
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
    '/?latch_oauth_code=c&latch_oauth_state=st&latch_oauth_provider=google#latch_fork=tok',
  )
  expect(takeOAuthReturn()).toEqual([{ code: 'c', state: 'st', provider: 'google' }, flow, 'tok'])
  expect(location.search).toBe('')
  expect(location.hash).toBe('')
})

test('error: an empty latch_fork is removed, and the modal ignores it', () => {
  history.replaceState(null, '', '/?x=1#latch_fork=')
  expect(takeOAuthReturn()[2]).toBe('')
  expect(location.search).toBe('?x=1')
  expect(location.hash).toBe('')
})
