import type { PendingOAuthFlow } from '@latch/shared'
import { afterEach, expect, test, vi } from 'vitest'
import { PENDING_FLOW_KEY, savePendingFlow, takeOAuthReturn } from './oauth.ts'

const flow = (patch: Partial<PendingOAuthFlow> = {}): PendingOAuthFlow => ({
  state: 'st',
  provider: 'google',
  intent: 'login',
  secret: 's'.repeat(43),
  ...patch,
})

afterEach(() => {
  history.replaceState(null, '', '/')
  sessionStorage.clear()
  vi.restoreAllMocks()
})

test('behavior: a return this tab started: its parameters and the saved flow, off the address bar', () => {
  savePendingFlow(flow())
  history.replaceState(
    { keep: 1 },
    '',
    '/app?x=1&latch_oauth_code=abc&latch_oauth_state=st&latch_oauth_provider=google#top',
  )
  // The third place is a session fork's token, the fifth one in the query (fork.test.ts): none.
  expect(takeOAuthReturn()).toEqual([
    { code: 'abc', state: 'st', provider: 'google' },
    flow(),
    undefined,
    undefined,
    false,
  ])
  expect(location.pathname).toBe('/app')
  expect(location.search).toBe('?x=1')
  expect(location.hash).toBe('#top')
  expect(history.state).toEqual({ keep: 1 })
  // Used once: the same return again is not handed on.
  expect(sessionStorage.getItem(PENDING_FLOW_KEY)).toBeNull()
})

test('behavior: the optional token, connector and wallet client come along', () => {
  savePendingFlow(flow({ state: 's', provider: 'github' }))
  history.replaceState(
    null,
    '',
    '/?latch_oauth_code=c&latch_oauth_state=s&latch_oauth_provider=github&latch_token=t&latch_connector=injected&latch_wallet_client=metamask',
  )
  expect(takeOAuthReturn()[0]).toEqual({
    code: 'c',
    state: 's',
    provider: 'github',
    token: 't',
    connector: 'injected',
    walletClient: 'metamask',
  })
  expect(location.search).toBe('')
})

test('error: a return this tab did not start (a link someone sent) is removed, not handed on', () => {
  history.replaceState(
    null,
    '',
    '/?latch_oauth_code=attacker&latch_oauth_state=theirs&latch_oauth_provider=google',
  )
  expect(takeOAuthReturn()).toEqual([undefined, undefined, undefined, undefined, false])
  expect(location.search).toBe('')
})

test('error: a return of another state than the saved flow is refused, and the flow is spent', () => {
  savePendingFlow(flow({ state: 'mine' }))
  history.replaceState(
    null,
    '',
    '/?latch_oauth_code=attacker&latch_oauth_state=theirs&latch_oauth_provider=google',
  )
  expect(takeOAuthReturn()).toEqual([undefined, undefined, undefined, undefined, false])
  expect(sessionStorage.getItem(PENDING_FLOW_KEY)).toBeNull()
})

test('behavior: an incomplete set is removed but not passed on', () => {
  savePendingFlow(flow())
  history.replaceState(null, '', '/?latch_oauth_code=abc&y=2')
  expect(takeOAuthReturn()).toEqual([undefined, undefined, undefined, undefined, false])
  expect(location.search).toBe('?y=2')
})

test('behavior: a URL without our parameters is left alone, and so is a pending flow', () => {
  savePendingFlow(flow())
  history.replaceState(null, '', '/page?code=1&state=2')
  const replace = vi.spyOn(history, 'replaceState')
  expect(takeOAuthReturn()).toEqual([])
  expect(replace).not.toHaveBeenCalled()
  expect(location.search).toBe('?code=1&state=2')
  // Back from the provider without finishing: the flow may still return in this tab.
  expect(JSON.parse(sessionStorage.getItem(PENDING_FLOW_KEY) ?? 'null')).toEqual(flow())
})

test("behavior: a wallet app's link (Phantom's) without an OAuth return hands on its wallet client alone, off the address bar", () => {
  history.replaceState(
    null,
    '',
    '/shop?item=3&latch_connector=injected&latch_wallet_client=phantom',
  )
  expect(takeOAuthReturn()).toEqual([undefined, undefined, undefined, 'phantom', false])
  expect(location.search).toBe('?item=3')
  // With a forged OAuth return beside it, still only the wallet client goes on.
  history.replaceState(
    null,
    '',
    '/?latch_oauth_code=attacker&latch_oauth_state=theirs&latch_oauth_provider=google&latch_wallet_client=phantom',
  )
  expect(takeOAuthReturn()).toEqual([undefined, undefined, undefined, 'phantom', false])
})
