import { afterEach, expect, test, vi } from 'vitest'
import { takeOAuthReturnParams } from './oauth.ts'

afterEach(() => {
  history.replaceState(null, '', '/')
  vi.restoreAllMocks()
})

test('behavior: reads code, state and provider and removes them from the address bar', () => {
  history.replaceState(
    { keep: 1 },
    '',
    '/app?x=1&latch_oauth_code=abc&latch_oauth_state=st&latch_oauth_provider=google#top',
  )
  expect(takeOAuthReturnParams()).toEqual({ code: 'abc', state: 'st', provider: 'google' })
  expect(location.pathname).toBe('/app')
  expect(location.search).toBe('?x=1')
  expect(location.hash).toBe('#top')
  expect(history.state).toEqual({ keep: 1 })
})

test('behavior: the optional token, connector and wallet client come along', () => {
  history.replaceState(
    null,
    '',
    '/?latch_oauth_code=c&latch_oauth_state=s&latch_oauth_provider=github&latch_token=t&latch_connector=injected&latch_wallet_client=metamask',
  )
  expect(takeOAuthReturnParams()).toEqual({
    code: 'c',
    state: 's',
    provider: 'github',
    token: 't',
    connector: 'injected',
    walletClient: 'metamask',
  })
  expect(location.search).toBe('')
})

test('behavior: an incomplete set is removed but not passed on', () => {
  history.replaceState(null, '', '/?latch_oauth_code=abc&y=2')
  expect(takeOAuthReturnParams()).toBeNull()
  expect(location.search).toBe('?y=2')
})

test('behavior: a URL without our parameters is left alone', () => {
  history.replaceState(null, '', '/page?code=1&state=2')
  const replace = vi.spyOn(history, 'replaceState')
  expect(takeOAuthReturnParams()).toBeNull()
  expect(replace).not.toHaveBeenCalled()
  expect(location.search).toBe('?code=1&state=2')
})
