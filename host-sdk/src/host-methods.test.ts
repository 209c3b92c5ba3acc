/**
 * Navigation is the host method an attacker in the modal's place would want: it is obeyed only
 * while a login or link is in flight (or the modal is open), and another call pending is not
 * enough. The rest of the host methods are tested across origins in link.test.ts.
 */
import type { LatchError, ModalMethods, PendingOAuthFlow } from '@latch/shared'
import { afterEach, expect, test } from 'vitest'
import { createCalls } from './calls.ts'
import { createEvents } from './events.ts'
import { createHostMethods } from './host-methods.ts'
import { PENDING_FLOW_KEY } from './oauth.ts'

const FLOW: PendingOAuthFlow = {
  state: 'st',
  provider: 'google',
  intent: 'login',
  secret: 's'.repeat(43),
}
// The calls below never reach the modal: each runs a promise the test holds open.
const remote = {} as ModalMethods
const forever = () => new Promise<never>(() => {})

afterEach(() => {
  history.replaceState(null, '', '/')
  sessionStorage.clear()
})

function setup() {
  const calls = createCalls()
  // No frame: the modal is not open, so only a pending flow may let navigation through.
  const host = createHostMethods(() => undefined, createEvents({ appId: '' }), calls, forever)
  const navigate = (url: string) =>
    host.navigate(url, FLOW).then(
      () => 'ok',
      (e: LatchError) => e.code,
    )
  return { calls, navigate }
}

test('error: navigate is refused while only a quick call is pending', async () => {
  const { calls, navigate } = setup()
  const quick = calls.invoke(remote, forever, 60_000).catch((e: LatchError) => e.code)
  expect(calls.flowPending()).toBe(false)
  expect(await navigate(`${location.origin}/#authorize`)).toBe('invalid_data')
  expect(sessionStorage.getItem(PENDING_FLOW_KEY)).toBeNull()
  calls.settleAll()
  expect(await quick).toBe('modal_unreachable')
})

test('behavior: a pending flow lets navigate through and saves it; once settled, navigate is refused again', async () => {
  const { calls, navigate } = setup()
  const login = calls.flow(remote, forever, 'login_exited').catch((e: LatchError) => e.code)
  expect(calls.flowPending()).toBe(true)
  expect(await navigate('javascript:alert(1)')).toBe('invalid_data')
  expect(await navigate(`${location.origin}/#authorize`)).toBe('ok')
  expect(location.hash).toBe('#authorize')
  expect(JSON.parse(sessionStorage.getItem(PENDING_FLOW_KEY) ?? 'null')).toEqual(FLOW)
  calls.settleAll()
  expect(await login).toBe('login_exited')
  expect(calls.flowPending()).toBe(false)
  expect(await navigate(`${location.origin}/#again`)).toBe('invalid_data')
})
