import { LatchError, type LoginResult, type User } from '@latch/shared'
import { act, cleanup } from '@testing-library/react'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { submitCode, submitDestination } from '../passwordless/passwordless.ts'
import { resetStore, store } from '../store.ts'
import { type ApiDouble, startApiDouble } from '../test/api-double.ts'
import { authAnswer, user } from '../test/fixtures.ts'
import { type Harness, renderModal } from '../test/harness.tsx'
import { link } from './entries.ts'
import {
  addNextStep,
  currentFlow,
  exitFlow,
  finishFlow,
  login,
  type NextStepRule,
  navigate,
  onFlow,
  sameFlow,
} from './flow.ts'

let api: ApiDouble
let removeStep: (() => void) | null = null
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
afterEach(() => {
  removeStep?.()
  removeStep = null
  cleanup()
  vi.useRealTimers()
  api.requests.length = 0
})

const signedIn = user()

/** Opens login() and signs in with an e-mail code; answers once 'Success!' shows. */
async function signInByCode(): Promise<{ harness: Harness; result: Promise<LoginResult> }> {
  api.on('POST /passwordless/init', { body: { success: true } })
  api.on('POST /passwordless/authenticate', authAnswer(signedIn, true))
  const harness = renderModal(api, { walletAuth: false })
  let result!: Promise<LoginResult>
  act(() => {
    result = login()
  })
  await act(() => submitDestination('email', 'ada@example.com'))
  vi.useFakeTimers({ shouldAdvanceTime: true })
  await act(() => submitCode('123456'))
  expect(store.getState().passwordless?.status).toBe('success')
  return { harness, result }
}

const advance = (ms: number) =>
  act(() => {
    vi.advanceTimersByTime(ms)
  })

describe('next steps', () => {
  test('behavior: a next step takes over after its own pause; the host waits until it finishes the flow', async () => {
    const asked: Parameters<NextStepRule>[0][] = []
    removeStep = addNextStep((finished) => {
      asked.push(finished)
      return finished.flow.kind === 'login'
        ? { pauseMs: 500, start: () => navigate('EMBEDDED_WALLET_SCREEN') }
        : null
    })
    const { harness, result } = await signInByCode()
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatchObject({
      flow: { kind: 'login' },
      result: { user: signedIn, isNewUser: true },
    })
    advance(450)
    expect(store.getState().screen).toBe('AWAITING_PASSWORDLESS_CODE')
    advance(100)
    expect(store.getState()).toMatchObject({ open: true, screen: 'EMBEDDED_WALLET_SCREEN' })
    let settled = false
    void result.then(() => {
      settled = true
    })
    await act(async () => {})
    expect(settled).toBe(false)
    expect(harness.emitted('login')).toEqual([])
    act(() => finishFlow())
    await expect(result).resolves.toEqual({ user: signedIn, isNewUser: true })
    expect(harness.emitted('login')).toEqual([{ user: signedIn, isNewUser: true }])
    expect(store.getState().open).toBe(false)
  })

  test('behavior: rules answering null leave the usual 1400 ms close; the first step claiming the flow wins', async () => {
    const started: string[] = []
    const removeNull = addNextStep(() => null)
    const removeFirst = addNextStep(() => ({ pauseMs: 1400, start: () => started.push('first') }))
    const removeSecond = addNextStep(() => ({ pauseMs: 10, start: () => started.push('second') }))
    removeStep = () => {
      removeNull()
      removeFirst()
      removeSecond()
    }
    await signInByCode()
    advance(1450)
    expect(started).toEqual(['first'])
    expect(store.getState().open).toBe(true)

    // Removed, a rule is asked no more: the flow closes after 1400 ms.
    removeFirst()
    removeSecond()
    cleanup()
    const { result } = await signInByCode()
    advance(1450)
    expect(started).toEqual(['first'])
    expect(store.getState().open).toBe(false)
    await expect(result).resolves.toEqual({ user: signedIn, isNewUser: true })
  })

  test('behavior: closing the modal during a next step still delivers the sign-in', async () => {
    removeStep = addNextStep(() => ({
      pauseMs: 500,
      start: () => navigate('EMBEDDED_WALLET_SCREEN'),
    }))
    const { harness, result } = await signInByCode()
    advance(550)
    act(() => exitFlow(true))
    await expect(result).resolves.toEqual({ user: signedIn, isNewUser: true })
    expect(harness.emitted('login')).toEqual([{ user: signedIn, isNewUser: true }])
  })
})

describe('a refused wallet credential (flow.refuse)', () => {
  test('behavior: during a next step after a sign-in, the refused view shows and closing still delivers the sign-in', async () => {
    removeStep = addNextStep(() => ({
      pauseMs: 500,
      start: () => navigate('EMBEDDED_WALLET_SCREEN'),
    }))
    const { harness, result } = await signInByCode()
    advance(550)
    const setOpens = () => harness.hostCalls.filter((c) => c.method === 'setOpen').length
    const before = setOpens()
    act(() => currentFlow().refuse(LatchError.of('wallet_sign_in_required')))
    expect(store.getState()).toMatchObject({ open: true, walletRefused: true })
    let settled = false
    void result.then(() => {
      settled = true
    })
    await act(async () => {})
    // The sign-in happened: it is no failure, and it waits for the visitor as before.
    expect(settled).toBe(false)
    // Nothing failed for the host, so its dialog stayed open: not told again.
    advance(10)
    expect(setOpens()).toBe(before)
    act(() => exitFlow(true))
    await expect(result).resolves.toEqual({ user: signedIn, isNewUser: true })
    expect(store.getState().walletRefused).toBe(false)
  })

  test('error: with nothing delivered yet, the caller rejects at once and the host is told to show the modal again a task later', async () => {
    const harness = renderModal(api, { walletAuth: false })
    let result!: Promise<LoginResult>
    act(() => {
      result = login()
    })
    const opened = () => harness.hostCalls.filter((c) => c.method === 'setOpen').length
    const before = opened()
    act(() => currentFlow().refuse(LatchError.of('wallet_sign_in_required')))
    await expect(result).rejects.toMatchObject({ code: 'wallet_sign_in_required' })
    expect(store.getState()).toMatchObject({ open: true, walletRefused: true })
    await act(() => new Promise((r) => setTimeout(r, 0)))
    expect(harness.hostCalls.slice(-1)[0]).toMatchObject({
      method: 'setOpen',
      args: [true, expect.any(String)],
    })
    expect(opened()).toBe(before + 1)
    act(() => exitFlow(true))
    expect(store.getState()).toMatchObject({ open: false, walletRefused: false })
  })
})

describe('the success pause', () => {
  test('error: a flow started during the pause is not closed by it', async () => {
    const { result } = await signInByCode()
    // The replaced sign-in's promise is not what this test is about.
    result.catch(() => {})
    let linked!: Promise<User>
    act(() => {
      linked = link('email')
    })
    const rejected = linked.catch((e: unknown) => e)
    expect(store.getState().screen).toBe('LINK_EMAIL_SCREEN')
    advance(2000)
    expect(store.getState()).toMatchObject({ open: true, screen: 'LINK_EMAIL_SCREEN' })
    act(() => exitFlow(true))
    expect(await rejected).toMatchObject({ code: 'link_exited' })
  })

  test('behavior: resetStore forgets the flow and stops its pause', async () => {
    const { harness, result } = await signInByCode()
    result.catch(() => {})
    resetStore()
    advance(2000)
    expect(harness.emitted('login')).toEqual([])
    expect(store.getState()).toMatchObject({ open: false, flow: null })
    expect(currentFlow()).toMatchObject({ waiting: null, result: null })
  })
})

test('param: flows compare by value', () => {
  expect(sameFlow({ kind: 'login' }, { kind: 'login' })).toBe(true)
  expect(sameFlow({ kind: 'link', account: 'google' }, { kind: 'link', account: 'google' })).toBe(
    true,
  )
  expect(sameFlow({ kind: 'link', account: 'google' }, { kind: 'link', account: 'github' })).toBe(
    false,
  )
  expect(sameFlow({ kind: 'login' }, { kind: 'link', account: 'email' })).toBe(false)
  expect(sameFlow({ kind: 'link', account: 'email' }, { kind: 'login' })).toBe(false)
  expect(sameFlow(null, { kind: 'login' })).toBe(false)
})

describe('a step of the flow on screen', () => {
  /** A promise settled from outside, for an answer that arrives after the screen moved on. */
  function later<V>() {
    let resolve!: (value: V) => void
    const promise = new Promise<V>((res) => {
      resolve = res
    })
    return { promise, resolve }
  }
  /** Whether `guarded` settled within a few ticks. */
  async function settled(guarded: Promise<unknown>): Promise<boolean> {
    let done = false
    void guarded.then(() => {
      done = true
    })
    for (let i = 0; i < 5; i++) await Promise.resolve()
    return done
  }

  test('behavior: an action declared with onFlow gets the handle of the flow on screen, with its intent', () => {
    renderModal(api, { walletAuth: false })
    act(() => store.setState({ user: signedIn }))
    const seen = onFlow((flow, tag: string) => ({ flow, tag, intent: flow.intent }))
    act(() => {
      login().catch(() => {})
    })
    expect(seen('a')).toMatchObject({ flow: currentFlow(), tag: 'a', intent: 'login' })
    act(() => {
      link('email').catch(() => {})
    })
    expect(seen('b')).toMatchObject({ flow: currentFlow(), intent: 'link' })
  })

  test('behavior: a step answers while it is the latest on its screen; a later step or another screen drops it', async () => {
    renderModal(api, { walletAuth: false })
    act(() => {
      login().catch(() => {})
    })
    const flow = currentFlow()
    act(() => navigate('AWAITING_CONNECTION'))
    const first = later<string>()
    const firstStep = flow.step('AWAITING_CONNECTION').guard(first.promise)
    const second = later<string>()
    const secondStep = flow.step('AWAITING_CONNECTION').guard(second.promise)
    first.resolve('stale')
    second.resolve('fresh')
    expect(await settled(firstStep)).toBe(false)
    expect(await secondStep).toBe('fresh')

    const third = later<string>()
    const thirdStep = flow.step('AWAITING_CONNECTION').guard(third.promise)
    act(() => navigate('LANDING'))
    third.resolve('left')
    expect(await settled(thirdStep)).toBe(false)
  })
})

describe('login() for a visitor signed in already', () => {
  const hides = (harness: Harness, from: number) =>
    harness.hostCalls.slice(from).filter((c) => c.method === 'setOpen' && c.args[0] === false)
      .length

  test('behavior: answers at once and hides the frame the host may have shown over a server-rendered landing', async () => {
    const { harness, result } = await signInByCode()
    advance(2000)
    await result
    expect(store.getState().open).toBe(false)
    const from = harness.hostCalls.length
    let again!: Promise<LoginResult>
    act(() => {
      again = login()
    })
    await expect(again).resolves.toEqual({ user: signedIn, isNewUser: false })
    expect(hides(harness, from)).toBe(1)
  })

  test('error: not while another screen is open: the frame stays', async () => {
    const { harness, result } = await signInByCode()
    advance(2000)
    await result
    let linked!: Promise<User>
    act(() => {
      linked = link('email')
    })
    linked.catch(() => {})
    const from = harness.hostCalls.length
    let again!: Promise<LoginResult>
    act(() => {
      again = login()
    })
    await expect(again).resolves.toEqual({ user: signedIn, isNewUser: false })
    expect(hides(harness, from)).toBe(0)
    expect(store.getState()).toMatchObject({ open: true, screen: 'LINK_EMAIL_SCREEN' })
    act(() => exitFlow(true))
  })
})

describe("the page's first login(), over a landing the visitor already uses", () => {
  // The host shows the server's painted landing at login(), before that call reaches the modal
  // (host-sdk create-latch.ts): the hydrated landing takes the visitor's clicks meanwhile.
  test('behavior: the screen the visitor reached before it arrived stays, and the sign-in begun there resolves it', async () => {
    api.on('POST /passwordless/init', { body: { success: true } })
    api.on('POST /passwordless/authenticate', authAnswer(signedIn, true))
    renderModal(api, { walletAuth: false })
    await act(() => submitDestination('email', 'ada@example.com'))
    expect(store.getState()).toMatchObject({ flow: null, screen: 'AWAITING_PASSWORDLESS_CODE' })
    let result!: Promise<LoginResult>
    act(() => {
      result = login()
    })
    expect(store.getState()).toMatchObject({
      flow: { kind: 'login' },
      open: true,
      screen: 'AWAITING_PASSWORDLESS_CODE',
    })
    vi.useFakeTimers({ shouldAdvanceTime: true })
    await act(() => submitCode('123456'))
    advance(2000)
    await expect(result).resolves.toEqual({ user: signedIn, isNewUser: true })
  })

  test('behavior: a screen opened from it (passkeys) stays', () => {
    renderModal(api, { walletAuth: false })
    act(() => navigate('PASSKEY_SCREEN'))
    act(() => {
      login().catch(() => {})
    })
    expect(store.getState()).toMatchObject({ flow: { kind: 'login' }, screen: 'PASSKEY_SCREEN' })
    act(() => exitFlow(true))
  })

  test('error: closed by the visitor before it arrived, it rejects with login_exited and the modal stays closed; the next login() opens the landing', async () => {
    const harness = renderModal(api, { walletAuth: false })
    act(() => navigate('PASSKEY_SCREEN'))
    act(() => exitFlow(true))
    const from = harness.hostCalls.length
    let first!: Promise<LoginResult>
    act(() => {
      first = login()
    })
    await expect(first).rejects.toMatchObject({ code: 'login_exited' })
    expect(store.getState()).toMatchObject({ open: false, flow: null })
    expect(
      harness.hostCalls.slice(from).some((c) => c.method === 'setOpen' && c.args[0] === true),
    ).toBe(false)
    act(() => {
      login().catch(() => {})
    })
    expect(store.getState()).toMatchObject({ open: true, screen: 'LANDING' })
    act(() => exitFlow(true))
  })

  test('error: a later login(), once a flow has ended, starts from the landing', () => {
    renderModal(api, { walletAuth: false })
    act(() => {
      login().catch(() => {})
    })
    act(() => navigate('PASSKEY_SCREEN'))
    act(() => exitFlow(true))
    act(() => navigate('PASSKEY_SCREEN'))
    act(() => {
      login().catch(() => {})
    })
    expect(store.getState()).toMatchObject({ flow: { kind: 'login' }, screen: 'LANDING' })
    act(() => exitFlow(true))
  })
})
