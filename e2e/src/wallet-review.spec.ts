/**
 * The in-app wallet's sign and review screens cannot be switched or hidden, in Chromium
 * against a local chain (anvil as chain 1): a request arriving while
 * another is on screen is refused at once with -32002 'Request already pending' and its hint,
 * whatever the mix (the SDK's methods, the EIP-1193 provider, ethers over it), while the one on
 * screen keeps its screen and its promise; logout() settles a request on screen; the confirm
 * button arms only after the request has been visible for 500 ms (IntersectionObserver v2: a
 * frame the host page made translucent never arms); typed data shows its domain, calldata its
 * ERC-20 meaning with unlimited approvals flagged; the host's texts are marked as the app's.
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { ANVIL_ACCOUNTS, type RunningAnvil, startAnvil } from '@latch/server/testing'
import type { ServerAppConfig, WalletAccount } from '@latch/shared'
import type { Page } from 'playwright-core'
import { recoverMessageAddress } from 'viem'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { modalFrame } from './axe.ts'
import { newEmail, screen, signInByEmail, visit } from './flows.ts'
import { type HostPage, WAIT_MS } from './harness.ts'
import { useHarness } from './use-harness.ts'
import { createWallet, sharedOnce } from './wallet-flows.ts'

const h = useHarness()
let anvil: RunningAnvil
beforeAll(async () => {
  anvil = await startAnvil({ chainId: 1 })
}, 60_000)
afterAll(async () => {
  await anvil?.stop()
})

const ETHERS_UMD = join(
  dirname(createRequire(import.meta.url).resolve('ethers')),
  '../dist/ethers.umd.min.js',
)
const SIGN = 'EMBEDDED_WALLET_SIGN_REQUEST_SCREEN'
const SEND = 'EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN'
const RECIPIENT = ANVIL_ACCOUNTS[2].address
const PENDING_HINT = 'Don’t see your wallet modal? Check your other browser windows.'

const chainApp = () =>
  h().createApp({
    embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: false },
    rpcUrls: { '1': anvil.url },
  })

/**
 * The user every test shares, made on first use: signed in on a page of its own with an in-app
 * wallet (automatic recovery), the provider and ethers loaded. Each test leaves the dialog
 * closed and no request on screen.
 */
const reviewer = sharedOnce(
  async (): Promise<{
    hp: HostPage
    wallet: WalletAccount
    email: string
    app: ServerAppConfig
  }> => {
    const app = await chainApp()
    const hp = await h().open({ appId: app.id, kept: true })
    const email = newEmail('review')
    await signInByEmail(h(), hp, email)
    const wallet = await createWallet(hp)
    await hp.page.addScriptTag({ path: ETHERS_UMD })
    await hp.page.evaluate(async () => {
      const w = window as unknown as Record<string, unknown>
      w.latchProvider = await window.latch?.getEthereumProvider()
    })
    return { hp, wallet, email, app }
  },
)

/**
 * The shared user, its dialog closed. A test that passed left it so; one that failed with a
 * request on screen left it open, and Escape closes it (rejecting that request), so the next
 * test starts as after a passing one and a failure stays the failing test's own.
 */
async function walletUser() {
  const user = await reviewer()
  const { page } = user.hp
  const leftOpen = await page.evaluate(
    () => document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === true,
  )
  if (leftOpen) await page.keyboard.press('Escape')
  await dialogOpen(page, false)
  return user
}

const dialogOpen = (page: Page, open: boolean) =>
  page.waitForFunction(
    (want) =>
      document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === want,
    open,
    { timeout: WAIT_MS },
  )

/** How a call fired in the page ended; `pending` while it has not. */
type Ended =
  | { state: 'pending' }
  | { state: 'ok'; value: unknown }
  | {
      state: 'error'
      /** A LatchError's code (a string), a provider's (a number) or ethers' ('UNKNOWN_ERROR'). */
      code: unknown
      /** The JSON-RPC code: a LatchError's rpcCode, a provider error's code, or what ethers wrapped. */
      rpcCode: unknown
      message: string
      details: unknown
    }

/**
 * Starts each call (an async function body over `latch`, `provider` and `ethers`) in the page,
 * in order and at once, without awaiting them; `ended(page, name)` reads how each ended.
 */
async function fire(page: Page, calls: Record<string, string>): Promise<void> {
  await page.evaluate((sources) => {
    const w = window as unknown as Record<string, unknown>
    w.__ended ??= {}
    const ended = w.__ended as Record<string, unknown>
    for (const [name, source] of Object.entries(sources)) {
      ended[name] = { state: 'pending' }
      const run = new Function(
        'latch',
        'provider',
        'ethers',
        `return (async () => { ${source} })()`,
      )
      ;(run(window.latch, w.latchProvider, w.ethers) as Promise<unknown>).then(
        (value) => {
          ended[name] = { state: 'ok', value: typeof value === 'bigint' ? String(value) : value }
        },
        (e: unknown) => {
          const err = (e ?? {}) as {
            code?: unknown
            rpcCode?: unknown
            message?: unknown
            details?: unknown
            data?: { details?: unknown }
            // ethers' own error wraps the provider's (as error, or info.error).
            error?: { code?: unknown; data?: { details?: unknown } }
            info?: { error?: { code?: unknown; data?: { details?: unknown } } }
          }
          const inner = err.error ?? err.info?.error
          ended[name] = {
            state: 'error',
            code: err.code,
            rpcCode: typeof err.rpcCode === 'number' ? err.rpcCode : (inner?.code ?? err.code),
            message: String(err.message),
            details: err.details ?? err.data?.details ?? inner?.data?.details,
          }
        },
      )
    }
  }, calls)
}

const ended = (page: Page, name: string): Promise<Ended> =>
  page.evaluate(
    (n) =>
      ((window as unknown as { __ended?: Record<string, Ended> }).__ended?.[n] ?? {
        state: 'pending',
      }) as Ended,
    name,
  )

/** Waits until the call has ended; answers how. */
async function settled(page: Page, name: string): Promise<Exclude<Ended, { state: 'pending' }>> {
  await page.waitForFunction(
    (n) =>
      (window as unknown as { __ended?: Record<string, { state: string }> }).__ended?.[n]?.state !==
      'pending',
    name,
    { timeout: WAIT_MS },
  )
  return (await ended(page, name)) as Exclude<Ended, { state: 'pending' }>
}

/** Asserts the call was refused with -32002 'Request already pending' and its hint. */
async function expectRefused(page: Page, name: string): Promise<void> {
  const outcome = await settled(page, name)
  expect(outcome, name).toMatchObject({ state: 'error', rpcCode: -32002, details: PENDING_HINT })
  if (outcome.state === 'error') expect(outcome.message).toContain('Request already pending')
}

const messageOnScreen = (hp: HostPage) =>
  screen(hp.modal, SIGN).getByTestId('sign-message').inputValue()

/** The visitor signs what is on screen (the button waits until it arms). */
async function signShown(hp: HostPage): Promise<void> {
  await visit(hp, SIGN)
  await screen(hp.modal, SIGN).getByRole('button', { name: 'Sign and continue' }).click()
}

test('behavior: two signMessage back to back: the second is refused at once with -32002 and its hint; the first stays on screen and signs its own message; a third then signs', async () => {
  const { hp, wallet } = await walletUser()
  await fire(hp.page, {
    first: `return latch.signMessage('First message')`,
    second: `return latch.signMessage('Second message')`,
  })
  await expectRefused(hp.page, 'second')
  await visit(hp, SIGN)
  expect(await messageOnScreen(hp)).toBe('First message')
  expect(await ended(hp.page, 'first')).toEqual({ state: 'pending' })
  // The refusal left the dialog open on the first request.
  await dialogOpen(hp.page, true)
  await signShown(hp)
  const first = await settled(hp.page, 'first')
  if (first.state !== 'ok') throw new Error(`first: ${JSON.stringify(first)}`)
  expect(
    await recoverMessageAddress({
      message: 'First message',
      signature: first.value as `0x${string}`,
    }),
  ).toBe(wallet.address)
  await dialogOpen(hp.page, false)
  await fire(hp.page, { third: `return latch.signMessage('Third message')` })
  await signShown(hp)
  expect(await messageOnScreen(hp)).toBe('Third message')
  expect(await settled(hp.page, 'third')).toMatchObject({ state: 'ok' })
})

test('behavior: a signMessage during a sendTransaction review is refused; the review is unchanged and the visitor sends it', async () => {
  const { hp, wallet } = await walletUser()
  const funding = await anvil.rpc<string>('eth_sendTransaction', [
    { from: ANVIL_ACCOUNTS[0].address, to: wallet.address, value: '0xde0b6b3a7640000' },
  ])
  expect((await anvil.receipt(funding)).status).toBe('0x1')
  await fire(hp.page, {
    send: `return latch.sendTransaction({ to: '${RECIPIENT}', value: '0x2386f26fc10000', chainId: 1 })`,
  })
  await visit(hp, SEND)
  const send = screen(hp.modal, SEND)
  const button = send.getByRole('button', { name: 'Send ETH' })
  await expect.poll(() => button.isEnabled(), { timeout: WAIT_MS }).toBe(true)
  await fire(hp.page, { sign: `return latch.signMessage('Sneaked in')` })
  await expectRefused(hp.page, 'sign')
  expect(await send.getByTestId('transaction-value').textContent()).toBe('0.01 ETH')
  expect(await ended(hp.page, 'send')).toEqual({ state: 'pending' })
  await button.click()
  await send.getByRole('button', { name: 'All Done' }).click()
  expect(await settled(hp.page, 'send')).toMatchObject({ state: 'ok', value: { status: 1 } })
})

test('behavior: two personal_sign from ethers at once: one is shown and signs, the other is refused with -32002; a burst of five mixed requests shows one and refuses four; after each, the next request works', async () => {
  const { hp, wallet } = await walletUser()
  const ethersSign = (text: string) =>
    `const signer = await new ethers.BrowserProvider(provider).getSigner()
     return signer.signMessage(${JSON.stringify(text)})`
  await fire(hp.page, { a: ethersSign('ethers A'), b: ethersSign('ethers B') })
  await visit(hp, SIGN)
  // ethers sends personal_sign's text as hex bytes: the screen reads them back as that text.
  const shown = await messageOnScreen(hp)
  expect(['ethers A', 'ethers B']).toContain(shown)
  expect(await screen(hp.modal, SIGN).getByTestId('sign-message-encoding').textContent()).toBe(
    'Sent as bytes (8), shown as text.',
  )
  const [winner, loser] = shown === 'ethers A' ? ['a', 'b'] : ['b', 'a']
  await expectRefused(hp.page, loser as string)
  await signShown(hp)
  const signed = await settled(hp.page, winner as string)
  if (signed.state !== 'ok') throw new Error(`${winner}: ${JSON.stringify(signed)}`)
  expect(
    await recoverMessageAddress({ message: shown, signature: signed.value as `0x${string}` }),
  ).toBe(wallet.address)
  await dialogOpen(hp.page, false)

  // Five at once, of every kind: the SDK's, the provider's and ethers'.
  const typedData = {
    domain: { name: 'Burst', chainId: 1 },
    types: { Note: [{ name: 'text', type: 'string' }] },
    primaryType: 'Note',
    message: { text: 'burst' },
  }
  await fire(hp.page, {
    burst1: `return latch.signMessage('Burst one')`,
    burst2: `return latch.sendTransaction({ to: '${RECIPIENT}', value: 1, chainId: 1 })`,
    burst3: `return provider.request({ method: 'eth_signTypedData_v4', params: ['${wallet.address}', ${JSON.stringify(JSON.stringify(typedData))}] })`,
    burst4: `return latch.exportWallet()`,
    burst5: ethersSign('Burst five'),
  })
  const names = ['burst1', 'burst2', 'burst3', 'burst4', 'burst5']
  // Four are refused at once; one waits on the visitor.
  await expect
    .poll(
      async () =>
        (await Promise.all(names.map((n) => ended(hp.page, n)))).filter(
          (o) => o.state !== 'pending',
        ).length,
      { timeout: WAIT_MS },
    )
    .toBe(4)
  const outcomes = await Promise.all(names.map((n) => ended(hp.page, n)))
  const waiting = names.filter((_, i) => outcomes[i]?.state === 'pending')
  expect(waiting).toHaveLength(1)
  for (const name of names.filter((n) => !waiting.includes(n))) {
    await expectRefused(hp.page, name)
  }
  // The visitor declines the one on screen, whatever it is: it alone is reported rejected.
  await dialogOpen(hp.page, true)
  await hp.modal.getByTestId('close-button').click()
  const declined = await settled(hp.page, waiting[0] as string)
  expect(declined.state).toBe('error')
  if (declined.state === 'error') expect(declined.rpcCode).not.toBe(-32002)
  await dialogOpen(hp.page, false)
  await fire(hp.page, { after: `return latch.signMessage('After the burst')` })
  await signShown(hp)
  expect(await settled(hp.page, 'after')).toMatchObject({ state: 'ok' })
})

test('behavior: the confirm button arms 500 ms after the request shows (a click before does nothing); in a frame the host page made translucent it never arms', async () => {
  const { hp } = await walletUser()
  const modal = await modalFrame(hp.page)
  // Chromium reports true visibility: the arming uses IntersectionObserver v2.
  expect(
    await modal.evaluate(
      () =>
        typeof IntersectionObserverEntry === 'function' &&
        'isVisible' in IntersectionObserverEntry.prototype,
    ),
  ).toBe(true)
  // Both moments are taken by a MutationObserver, in the microtask after the DOM changed: a
  // poll's own lateness on a loaded machine (its timers are the page clock's) made the button
  // look shown later than it was, and the wait shorter. The observer is in place before the
  // request goes out: one attached after could first see a button shown some time before.
  type Timing = { early: { disabled: boolean; armed: string | null }; waited: number }
  await modal.evaluate((waitMs) => {
    ;(window as unknown as { armTiming: Promise<Timing> }).armTiming = new Promise<Timing>(
      (resolve, reject) => {
        let button: HTMLButtonElement | null = null
        let shownAt = 0
        let early = { disabled: false, armed: null as string | null }
        const check = () => {
          if (!button) {
            button = document.querySelector<HTMLButtonElement>('[data-testid="sign-submit"]')
            if (!button) return
            shownAt = performance.now()
            early = { disabled: button.disabled, armed: button.dataset.armed ?? null }
            // The click a visitor (or a page's trick) makes at once: nothing happens.
            button.click()
          }
          if (button.dataset.armed === 'true') {
            observer.disconnect()
            clearTimeout(timer)
            resolve({ early, waited: performance.now() - shownAt })
          }
        }
        const observer = new MutationObserver(check)
        observer.observe(document, {
          subtree: true,
          childList: true,
          attributes: true,
          attributeFilter: ['data-armed'],
        })
        const timer = setTimeout(() => {
          observer.disconnect()
          reject(new Error(button ? 'never armed' : 'no sign screen'))
        }, waitMs)
        if (document.querySelector('[data-testid="sign-submit"]')) {
          reject(new Error('a sign screen before the request'))
        }
      },
    )
  }, WAIT_MS)
  await fire(hp.page, { sign: `return latch.signMessage('Read me first')` })
  const timing = await modal.evaluate(
    () => (window as unknown as { armTiming: Promise<Timing> }).armTiming,
  )
  expect(timing.early).toEqual({ disabled: true, armed: 'false' })
  expect(timing.waited).toBeGreaterThanOrEqual(450)
  expect(await ended(hp.page, 'sign')).toEqual({ state: 'pending' })
  await signShown(hp)
  expect(await settled(hp.page, 'sign')).toMatchObject({ state: 'ok' })
  await dialogOpen(hp.page, false)

  // The host page dims the frame (a clickjacking overlay would): the button stays unarmed.
  const frameStyle = (opacity: string) =>
    hp.page.evaluate((o) => {
      const frame = document.querySelector<HTMLElement>('[data-testid="latch-frame"]')
      if (!frame) throw new Error('no frame')
      frame.style.opacity = o
    }, opacity)
  await frameStyle('0.2')
  await fire(hp.page, { dimmed: `return latch.signMessage('Hidden under a trick')` })
  await visit(hp, SIGN)
  const button = screen(hp.modal, SIGN).getByRole('button', { name: 'Sign and continue' })
  await hp.page.waitForTimeout(1500)
  expect(await button.getAttribute('data-armed')).toBe('false')
  expect(await button.isDisabled()).toBe(true)
  await frameStyle('1')
  await expect.poll(() => button.getAttribute('data-armed'), { timeout: WAIT_MS }).toBe('true')
  await button.click()
  expect(await settled(hp.page, 'dimmed')).toMatchObject({ state: 'ok' })
})

test("behavior: typed data shows its domain and an unlimited permit's warning; an ERC-20 approve of max uint shows its decoded calldata and the warning; the host's texts read 'From <app>'", async () => {
  const { hp, wallet, app } = await walletUser()
  const funding = await anvil.rpc<string>('eth_sendTransaction', [
    { from: ANVIL_ACCOUNTS[0].address, to: wallet.address, value: '0xde0b6b3a7640000' },
  ])
  expect((await anvil.receipt(funding)).status).toBe('0x1')
  const token = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'
  const permit = {
    domain: { name: 'USD Coin', version: '2', chainId: 1, verifyingContract: token },
    types: {
      Permit: [
        { name: 'owner', type: 'address' },
        { name: 'spender', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'nonce', type: 'uint256' },
        { name: 'deadline', type: 'uint256' },
      ],
    },
    primaryType: 'Permit',
    message: {
      owner: wallet.address,
      spender: RECIPIENT,
      value: (2n ** 256n - 1n).toString(),
      nonce: 0,
      deadline: 1_900_000_000,
    },
  }
  await fire(hp.page, {
    permit: `return provider.request({ method: 'eth_signTypedData_v4', params: ['${wallet.address}', ${JSON.stringify(JSON.stringify(permit))}] })`,
  })
  await visit(hp, SIGN)
  const sign = screen(hp.modal, SIGN)
  expect(await sign.getByTestId('domain-name').textContent()).toBe('USD Coin (version 2)')
  expect(await sign.getByTestId('domain-chain').textContent()).toBe('Ethereum')
  expect(await sign.getByTestId('domain-contract').textContent()).toBe(token)
  expect(await sign.getByTestId('decoded-amount').textContent()).toBe('Unlimited')
  expect(await sign.getByTestId('unlimited-warning').isVisible()).toBe(true)
  await hp.modal.getByTestId('close-button').click()
  expect(await settled(hp.page, 'permit')).toMatchObject({ state: 'error', code: 4001 })
  await dialogOpen(hp.page, false)

  const approve = `0x095ea7b3${RECIPIENT.slice(2).toLowerCase().padStart(64, '0')}${'f'.repeat(64)}`
  await fire(hp.page, {
    approve: `return latch.sendTransaction({ to: '${token}', data: '${approve}', chainId: 1 }, { description: 'Latch needs this to protect you.', buttonText: 'Approve' })`,
  })
  await visit(hp, SEND)
  const send = screen(hp.modal, SEND)
  await expect
    .poll(() => send.getByRole('button', { name: 'Approve' }).isEnabled(), { timeout: WAIT_MS })
    .toBe(true)
  expect(await send.getByTestId('decoded-call').textContent()).toContain('approve')
  expect(await send.getByTestId('decoded-amount').textContent()).toBe('Unlimited')
  const warning = send.getByTestId('unlimited-warning')
  expect(await warning.isVisible()).toBe(true)
  expect(await warning.textContent()).toContain(RECIPIENT)
  // The host's words carry the app's name; the calldata opens by keyboard.
  expect(await send.getByTestId('app-text').textContent()).toContain(
    `From ${app.name}Latch needs this to protect you.`,
  )
  expect(await send.getByTestId('app-label').last().textContent()).toBe(`From ${app.name}`)
  await send.getByTestId('calldata').locator('summary').focus()
  await send.getByTestId('calldata').locator('summary').press('Enter')
  expect(await send.getByTestId('calldata-hex').isVisible()).toBe(true)
  expect(await send.getByTestId('calldata-hex').textContent()).toBe(approve)
  await visit(hp, SEND)
  await hp.modal.getByTestId('close-button').click()
  expect(await settled(hp.page, 'approve')).toMatchObject({
    state: 'error',
    code: 'transaction_exited',
  })
})

test('behavior: logout() during a sign request settles it at once with not_authenticated and closes the modal; signed in again, a plain signMessage signs', async () => {
  const { hp, wallet, email } = await walletUser()
  await fire(hp.page, { sign: `return latch.signMessage('Before logout')` })
  await visit(hp, SIGN)
  await fire(hp.page, { logout: 'return latch.logout()' })
  expect(await settled(hp.page, 'logout')).toMatchObject({ state: 'ok' })
  expect(await settled(hp.page, 'sign')).toMatchObject({
    state: 'error',
    code: 'not_authenticated',
    message: 'User is not authenticated.',
  })
  await dialogOpen(hp.page, false)
  await h().ageCodes(email)
  await signInByEmail(h(), hp, email)
  await dialogOpen(hp.page, false)
  await fire(hp.page, { again: `return latch.signMessage('After logout')` })
  await signShown(hp)
  const again = await settled(hp.page, 'again')
  if (again.state !== 'ok') throw new Error(`again: ${JSON.stringify(again)}`)
  expect(
    await recoverMessageAddress({
      message: 'After logout',
      signature: again.value as `0x${string}`,
    }),
  ).toBe(wallet.address)
})
