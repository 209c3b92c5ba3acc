import type { PendingOAuthFlow } from '@latch/shared'
import { afterEach, expect, test } from 'vitest'
import { PENDING_FLOW_KEY, savePendingFlow, takeOAuthReturn } from './oauth.ts'

// A session fork's token arrives in the host URL's fragment as latch_fork (the wallet app's
// in-app browser opens the page with it); takeOAuthReturn hands it to init as its fourth
// argument. In the query it is refused as leaked: removed, never handed on, and init's fifth
// argument (forkInQuery) says there was one, so the modal warns the page.

afterEach(() => {
  history.replaceState(null, '', '/')
  sessionStorage.clear()
})

test('behavior: latch_fork is taken off the fragment and handed on, the rest of the address kept', () => {
  history.replaceState({ keep: 1 }, '', '/shop?item=7&b=2#latch_fork=AbC-_9')
  expect(takeOAuthReturn()).toEqual([undefined, undefined, 'AbC-_9', undefined, false])
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
  history.replaceState(null, '', '/shop?item=7&latch_fork=AbC-_9')
  const taken = takeOAuthReturn()
  expect(taken).toEqual([undefined, undefined, undefined, undefined, true])
  expect(JSON.stringify(taken)).not.toContain('AbC-_9')
  expect(location.search).toBe('?item=7')
  // Both at once: the fragment's is used, the query's still reported.
  history.replaceState(null, '', '/?latch_fork=q#latch_fork=f')
  expect(takeOAuthReturn()).toEqual([undefined, undefined, 'f', undefined, true])
  expect(location.href).toBe(`${location.origin}/`)
  // With an OAuth return too, the flag rides along and the query's token still does not.
  savePendingFlow({ state: 'st', provider: 'google', intent: 'login', secret: 's'.repeat(43) })
  history.replaceState(null, '', '/?latch_oauth_code=c&latch_oauth_state=st&latch_fork=q')
  const withReturn = takeOAuthReturn()
  expect(withReturn[0]).toEqual({ code: 'c', state: 'st' })
  expect(withReturn.slice(2)).toEqual([undefined, undefined, true])
  expect(location.search).toBe('')
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
  expect(takeOAuthReturn()).toEqual([undefined, undefined, 'tok', undefined, false])
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
  expect(takeOAuthReturn()).toEqual([
    { code: 'c', state: 'st', provider: 'google' },
    flow,
    'tok',
    undefined,
    false,
  ])
  expect(location.search).toBe('')
  expect(location.hash).toBe('')
})

test('error: an empty latch_fork is removed, and the modal ignores it', () => {
  history.replaceState(null, '', '/?x=1#latch_fork=')
  expect(takeOAuthReturn()[2]).toBe('')
  expect(location.search).toBe('?x=1')
  expect(location.hash).toBe('')
})
