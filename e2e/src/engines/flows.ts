/**
 * What a visitor does in the engine lanes, on any EnginePage: the SDK's calls started in the page
 * and read back by a wait in the page (WebDriver classic runs one command at a time, so no call
 * may hold the session while the visitor clicks), and the modal's screens walked by their test ids.
 * The modal's fixed pauses (1400 ms after a code, 4500 ms on the created screen) are waited
 * out: these browsers have no page clock, and the lanes are few.
 */
import type { Hex, LoginResult, User, WalletAccount } from '@latch/shared'
import { isHex, numberToHex } from 'viem'
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts'
import { expect } from 'vitest'
import { AXE_TAGS, axeSource, formatViolations, runAxeInPage } from '../axe.ts'
import type { CallError, Outcome } from '../flows.ts'
import { WAIT_MS } from '../harness.ts'
import { installProvider } from '../injected-wallet.ts'
import { type EnginePage, MODAL, WALLET, waitIn } from './driver.ts'
import type { EngineStack, Layout } from './stack.ts'

type Calls = Record<string, Outcome<unknown> | null>

/** A call of window.latch started in the page; `settled` polls for how it settled. */
export interface Started<T> {
  settled(ms?: number): Promise<Outcome<T>>
}

export async function start<T>(
  page: EnginePage,
  method: string,
  ...args: unknown[]
): Promise<Started<T>> {
  const id = await page.run(
    [],
    ({ method, args }: { method: string; args: unknown[] }) => {
      const w = window as unknown as { __engineCalls?: Calls; latch: unknown }
      w.__engineCalls ??= {}
      const calls = w.__engineCalls
      const id = String(Object.keys(calls).length + 1)
      calls[id] = null
      const latch = w.latch as Record<string, (...a: unknown[]) => Promise<unknown>>
      Promise.resolve()
        .then(() => latch[method]?.(...args))
        .then(
          (value) => {
            calls[id] = { ok: true, value: value ?? null }
          },
          (e: { code?: unknown; message?: unknown; name?: unknown }) => {
            calls[id] = {
              ok: false,
              error: {
                code: typeof e?.code === 'string' ? e.code : null,
                message: typeof e?.message === 'string' ? e.message : String(e),
                name: typeof e?.name === 'string' ? e.name : null,
              },
            }
          },
        )
      return id
    },
    { method, args },
  )
  return {
    async settled(ms = WAIT_MS) {
      const outcome = await waitIn(
        page,
        `${method}() settling`,
        [],
        (key: string) => (window as unknown as { __engineCalls: Calls }).__engineCalls[key],
        id,
        ms,
      )
      return outcome as Outcome<T>
    },
  }
}

export function ok<T>(outcome: Outcome<T>, what: string): T {
  if (!outcome.ok) throw new Error(`${what} rejected: ${JSON.stringify(outcome.error)}`)
  return outcome.value
}

export function rejected<T>(outcome: Outcome<T>, what: string): CallError {
  if (outcome.ok) throw new Error(`${what} resolved: ${JSON.stringify(outcome.value)}`)
  return outcome.error
}

/** Screens axe passed in this file's browser, by engine and name: each is checked once. */
const accessible = new Set<string>()

/**
 * Runs axe-core (the Chromium suite's rules, axe.ts) in the frame at `path` and fails on any
 * violation, once per `where` in this browser: the screens of these flows are the Chromium
 * suite's, held to axe there in every state; here they are checked once in each engine.
 */
export async function expectAccessible(
  page: EnginePage,
  path: string[],
  where: string,
): Promise<void> {
  const key = `${page.engine}:${where}`
  if (accessible.has(key)) return
  const loaded = await page.run(path, () => typeof (window as { axe?: unknown }).axe === 'object')
  if (!loaded) await page.inject(path, axeSource())
  const violations = await page.run(path, runAxeInPage, [...AXE_TAGS])
  if (violations.length > 0)
    throw new Error(formatViolations(`${where} (${page.engine})`, violations))
  accessible.add(key)
}

export const testId = (id: string) => `[data-testid="${id}"]`
export const screenOf = (id: string) => testId(`screen-${id}`)

/** Opens the demo page in the layout (its app, its language) and waits for `latch.ready`. */
export async function openHost(
  page: EnginePage,
  stack: EngineStack,
  layout: Layout,
  options: { appId?: string; lang?: string; path?: string } = {},
): Promise<void> {
  const url = new URL(options.path ?? '/', stack.hostUrl(layout))
  if (options.appId) url.searchParams.set('appId', options.appId)
  if (options.lang) url.searchParams.set('lang', options.lang)
  await page.goto(url.toString())
  const state = await waitIn(
    page,
    'latch.ready',
    [],
    () => {
      const latch = (window as unknown as { latch?: { ready: Promise<void> } }).latch
      const w = window as unknown as { __engineReady?: string }
      if (!latch) return null
      if (!w.__engineReady) {
        w.__engineReady = 'waiting'
        latch.ready.then(
          () => {
            w.__engineReady = 'ok'
          },
          (e: unknown) => {
            w.__engineReady = `rejected: ${String(e)}`
          },
        )
      }
      return w.__engineReady === 'waiting' ? null : w.__engineReady
    },
    null,
    WAIT_MS,
  )
  if (state !== 'ok') throw new Error(`latch.ready ${state}`)
}

/** Whether the host's dialog is open. */
export const dialogOpen = (page: EnginePage) =>
  page.run([], () => {
    const dialog = document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')
    return dialog?.open === true
  })

export async function waitDialog(page: EnginePage, open: boolean): Promise<void> {
  await waitIn(
    page,
    `the dialog ${open ? 'opening' : 'closing'}`,
    [],
    (open: boolean) =>
      (document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === true) ===
      open
        ? true
        : null,
    open,
    WAIT_MS,
  )
}

/** Types one digit into each box, as a person would. */
async function typeBoxes(page: EnginePage, prefix: string, value: string): Promise<void> {
  for (let i = 0; i < value.length; i++) {
    await page.type([MODAL], testId(`${prefix}${i}`), value.charAt(i))
  }
}

/** login() by an e-mail code, to its result (the success pause waited out). */
export async function signInByEmail(
  page: EnginePage,
  stack: EngineStack,
  email: string,
): Promise<LoginResult> {
  const login = await start<LoginResult>(page, 'login')
  await waitDialog(page, true)
  await page.waitFor([MODAL], screenOf('LANDING'))
  await expectAccessible(page, [MODAL], 'LANDING')
  await page.type([MODAL], testId('email-input'), email)
  await page.click([MODAL], testId('email-submit'))
  const code = await stack.emailCode(email)
  await page.waitFor([MODAL], screenOf('AWAITING_PASSWORDLESS_CODE'))
  await expectAccessible(page, [MODAL], 'AWAITING_PASSWORDLESS_CODE')
  await typeBoxes(page, 'code-input-', code)
  const result = ok(await login.settled(WAIT_MS + 5000), 'login()')
  expect(result.user.email?.address).toBe(email)
  await waitDialog(page, false)
  return result
}

/** createWallet() on an app that creates without a passcode (the created screen waited out). */
export async function createWallet(page: EnginePage): Promise<WalletAccount> {
  const created = await start<WalletAccount>(page, 'createWallet')
  const wallet = ok(await created.settled(WAIT_MS + 10_000), 'createWallet()')
  expect(wallet.address).toMatch(/^0x[0-9a-fA-F]{40}$/)
  await waitDialog(page, false)
  return wallet
}

/** signMessage(message) through the review screen's 'Sign and continue' (once it armed). */
export async function signThroughScreen(page: EnginePage, message: string): Promise<Hex> {
  const signed = await start<Hex>(page, 'signMessage', message)
  await page.waitFor([MODAL], screenOf('EMBEDDED_WALLET_SIGN_REQUEST_SCREEN'))
  const armed = `${testId('sign-submit')}[data-armed="true"]`
  await page.waitFor([MODAL], armed)
  await expectAccessible(page, [MODAL], 'EMBEDDED_WALLET_SIGN_REQUEST_SCREEN')
  await page.click([MODAL], armed)
  const signature = ok(await signed.settled(), 'signMessage()')
  await waitDialog(page, false)
  return signature
}

/** The signed-in user as the page's SDK has it. */
export async function currentUser(page: EnginePage): Promise<User | null> {
  return ok(await (await start<User | null>(page, 'getUser')).settled(), 'getUser()')
}

/**
 * forkSession() through MetaMask's in-app browser link; answers the host page the wallet app
 * would open (the fork token in its fragment).
 */
export async function forkThroughMetaMask(page: EnginePage): Promise<string> {
  const fork = await start<string>(page, 'forkSession')
  await page.waitFor([MODAL], screenOf('SESSION_FORK_SCREEN'))
  const live = `${testId('fork-wallet-metamask')}:not([disabled])`
  await page.waitFor([MODAL], `${live}, ${testId('fork-error')}`)
  const refused = await page.run(
    [MODAL],
    (css: string) => document.querySelector(css)?.textContent ?? null,
    testId('fork-error'),
  )
  if (refused !== null) throw new Error(`the fork screen says: ${refused}`)
  await expectAccessible(page, [MODAL], 'SESSION_FORK_SCREEN')
  await page.click([MODAL], live)
  const link = new URL(ok(await fork.settled(), 'forkSession()'))
  expect(link.origin).toBe('https://metamask.app.link')
  return `https://${link.pathname.slice('/dapp/'.length)}${link.search}${link.hash}`
}

/** The wallet frame's approval button, clicked once it armed. */
export const clickApproval = (page: EnginePage, css: string) =>
  page.click([MODAL, WALLET], `${css}:not([aria-disabled])`)

// ---- A browser extension wallet ----------------------------------------------------------

interface Pending {
  id: number
  method: string
  params: unknown
}

/**
 * The EIP-1193 double of injected-wallet.ts (its in-page provider, announced by EIP-6963), for
 * a browser without bindings: the provider queues each request in the page, and `serve` polls
 * the queue and answers with a viem account in this process. Installed into the loaded page,
 * before the modal asks for wallets.
 */
export async function injectWallet(
  page: EnginePage,
  key: Hex,
): Promise<{ address: Hex; stop(): Promise<void> }> {
  const account: PrivateKeyAccount = privateKeyToAccount(key)
  const binding = '__engineWallet'
  await page.run(
    [],
    (name: string) => {
      const w = window as unknown as Record<string, unknown> & {
        __engineQueue: Pending[]
        __engineAnswers: Map<number, (a: unknown) => void>
      }
      w.__engineQueue = []
      w.__engineAnswers = new Map()
      let next = 0
      w[name] = (request: { method: string; params: unknown }) =>
        new Promise((resolve) => {
          next += 1
          w.__engineQueue.push({ id: next, ...request })
          w.__engineAnswers.set(next, resolve)
        })
    },
    binding,
  )
  await page.run([], installProvider as (arg: never) => void, {
    binding,
    emitter: '__engineWalletEmit',
    info: {
      uuid: crypto.randomUUID(),
      name: 'Test Wallet',
      icon: 'data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHdpZHRoPSIzMiIgaGVpZ2h0PSIzMiIvPg==',
      rdns: 'test.latch.wallet',
    },
    legacy: false,
    announce: true,
    flags: {},
  })
  let connected = false
  const answer = async ({ method, params }: Pending): Promise<unknown> => {
    const list = Array.isArray(params) ? params : []
    switch (method) {
      case 'eth_requestAccounts':
        connected = true
        return { result: [account.address] }
      case 'eth_accounts':
        return { result: connected ? [account.address] : [] }
      case 'eth_chainId':
        return { result: numberToHex(1) }
      case 'personal_sign': {
        const message = list[0]
        const signable =
          typeof message === 'string' && isHex(message) ? { raw: message } : String(message)
        return { result: await account.signMessage({ message: signable }) }
      }
      default:
        return { error: { code: 4200, message: `Unsupported method: ${method}` } }
    }
  }
  let running = true
  const loop = (async () => {
    while (running) {
      // Waits in the page for a request, a short slice at a time (it holds WebKit's session).
      const queued = await page
        .poll(
          [],
          () => {
            const w = window as unknown as { __engineQueue?: Pending[] }
            const items = w.__engineQueue ?? []
            if (items.length === 0) return null
            w.__engineQueue = []
            return items
          },
          null,
          300,
        )
        .then((items) => items ?? [])
        .catch(async () => {
          await new Promise((r) => setTimeout(r, 100))
          return [] as Pending[]
        })
      for (const request of queued) {
        const reply = await answer(request)
        await page.run(
          [],
          ({ id, reply }: { id: number; reply: unknown }) => {
            const w = window as unknown as { __engineAnswers: Map<number, (a: unknown) => void> }
            w.__engineAnswers.get(id)?.(reply)
            w.__engineAnswers.delete(id)
          },
          { id: request.id, reply },
        )
      }
    }
  })()
  return {
    address: account.address,
    async stop() {
      running = false
      await loop
    },
  }
}
