/**
 * Steps the in-app wallet specs share: an app per embedded-wallet setting, the passcode boxes,
 * the screens a modal showed, calls of the wallet methods, and the key material a test may see
 * (through the server's own store and the frame's own code, never through the browser).
 */
import {
  type Hex,
  type HostEventName,
  type ServerAppConfig,
  type ServerCreateOnLogin,
  type User,
  WALLET_CREATED_SCREEN_MS,
  type WalletAccount,
} from '@latch/shared'
import type { BrowserContext, FrameLocator, Page } from 'playwright-core'
import { afterAll, expect } from 'vitest'
import { walletCredentialName, walletCredentialValue } from '../../server/src/wallets/credential.ts'
import { openWalletRecord } from '../../server/src/wallets/records.ts'
import {
  combineShares,
  fetchApi,
  type ShareStore,
  walletCore,
} from '../../wallet-frame/src/index.ts'
import { modalFrame } from './axe.ts'
import {
  type BoxEntry,
  type CallError,
  enterBoxes,
  expectOk,
  type Outcome,
  runOutPause,
  screen,
  settle,
  visit,
} from './flows.ts'
import { type Harness, type HostPage, WAIT_MS } from './harness.ts'
import './window.ts'

export const SCREENS = {
  create: 'EMBEDDED_WALLET_SCREEN',
  created: 'EMBEDDED_WALLET_CREATED_SCREEN',
  connecting: 'EMBEDDED_WALLET_CONNECTING_SCREEN',
  recovery: 'EMBEDDED_WALLET_RECOVERY_SCREEN',
  sign: 'EMBEDDED_WALLET_SIGN_REQUEST_SCREEN',
} as const

/**
 * `signMessage(message)` in the page through the sign screen (visited, so axe checks it; then
 * 'Sign and continue'); answers the signature.
 */
export async function signThroughScreen(hp: HostPage, message: string): Promise<Hex> {
  const signed = settle(
    hp.page.evaluate(async (m) => {
      const latch = window.latch as unknown as { signMessage(m: string): Promise<Hex> }
      return { ok: true as const, value: await latch.signMessage(m) }
    }, message),
    'signMessage()',
  )
  await visit(hp, SCREENS.sign)
  await screen(hp.modal, SCREENS.sign).getByRole('button', { name: 'Sign and continue' }).click()
  return expectOk(await signed)
}

/** The product's texts the specs look for, written out once. */
export const TEXTS = {
  invalidPasscode: 'Invalid recovery passcode, please try again.',
  locked: 'Too many incorrect passcodes. Recovery is locked, please try again later.',
  oneWallet: 'Only one wallet per user is currently allowed',
  createExited: 'User exited before creating a wallet',
  recoveryExited: 'User exited before their wallet could be recovered',
  createSignedOut: 'User must be authenticated before creating a wallet',
  recoverNotAllowed: 'User must be authenticated and have a wallet before it can be recovered',
} as const

export interface WalletSettings {
  createOnLogin?: ServerCreateOnLogin
  requireUserPasswordOnCreate?: boolean
}

/** An app with e-mail login and these embedded-wallet settings, through the real apps service. */
export const walletApp = (h: Harness, settings: WalletSettings): Promise<ServerAppConfig> =>
  h.createApp({
    embeddedWalletConfig: {
      createOnLogin: settings.createOnLogin ?? 'off',
      requireUserPasswordOnCreate: settings.requireUserPasswordOnCreate ?? false,
    },
  })

/**
 * An init script for every frame of a context: records each test id that appears in the
 * document (the modal's screens, the passcode boxes), so a spec can tell one never showed.
 */
const SCREEN_RECORDER = `(() => {
  const seen = (window.__latchSeen = [])
  const scan = () => {
    for (const el of document.querySelectorAll('[data-testid]')) {
      const id = el.getAttribute('data-testid')
      if (!seen.includes(id)) seen.push(id)
    }
  }
  new MutationObserver(scan).observe(document, { childList: true, subtree: true, attributes: true })
})()`

/** For open()'s `prepare`: the modal records the screens it shows (screensSeen). */
export async function recordScreens(context: BrowserContext): Promise<void> {
  await context.addInitScript(SCREEN_RECORDER)
}

/** Every test id the modal has shown since it loaded, in order. */
async function testIdsSeen(page: Page): Promise<string[]> {
  const frame = await modalFrame(page)
  return frame.evaluate(() => (window as unknown as { __latchSeen?: string[] }).__latchSeen ?? [])
}

/** Every screen the modal has shown since it loaded, in order. */
export async function screensSeen(page: Page): Promise<string[]> {
  return (await testIdsSeen(page))
    .filter((id) => id.startsWith('screen-'))
    .map((id) => id.slice('screen-'.length))
}

/** Whether the modal ever showed passcode boxes to type into (a prompt) since it loaded. */
export async function passcodeAsked(page: Page): Promise<boolean> {
  return (await testIdsSeen(page)).some((id) => /^passcode-input-\d+$/.test(id))
}

type WalletMethod = 'createWallet' | 'recoverWallet' | 'getUser' | 'getAccessToken'

/** Calls a wallet method of `window.latch` and answers how it settled (never throws). */
export function walletCall<T>(page: Page, method: WalletMethod): Promise<Outcome<T>> {
  return page
    .evaluate(async (name) => {
      try {
        const latch = window.latch
        if (!latch) throw new Error('window.latch is missing')
        const value = await (latch[name] as () => Promise<unknown>)()
        return { ok: true as const, value: value as T }
      } catch (e) {
        const err = (e ?? {}) as { code?: unknown; message?: unknown; name?: unknown }
        const error: CallError = {
          code: typeof err.code === 'string' ? err.code : null,
          message: typeof err.message === 'string' ? err.message : String(e),
          name: typeof err.name === 'string' ? err.name : null,
        }
        return { ok: false as const, error }
      }
    }, method)
    .catch((e: unknown) => ({
      ok: false as const,
      error: { code: null, message: String(e), name: 'PlaywrightError' },
    })) as Promise<Outcome<T>>
}

/**
 * What the tests of a file share (a visitor on a page opened with `kept: true`, say), made by `make` on
 * first use and its page's context closed after the file's last test. Call at the top of a
 * spec file, after useHarness.
 */
export function sharedOnce<T extends { hp: HostPage }>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined
  afterAll(async () => {
    const value = await made?.catch(() => undefined)
    await value?.hp.context.close().catch(() => {})
  })
  return () => {
    made ??= make()
    return made
  }
}

/** The six passcode boxes of the screen on show. */
export const passcodeBoxes = (modal: FrameLocator) =>
  modal.locator('input[data-testid^="passcode-input-"]')

/**
 * Enters a passcode as a paste or a password manager puts it into the first box, which fills
 * the boxes from it; with `{ typed: true }` one character into each box, as a person types (the
 * specs of the passcode screen's own rules). See enterCode.
 */
export function enterPasscode(
  modal: FrameLocator,
  passcode: string,
  entry: BoxEntry = {},
): Promise<void> {
  return enterBoxes(passcodeBoxes(modal), passcode, entry)
}

/** The 'user' events the page received, recorded from the moment this is called. */
export async function recordUserEvents(page: Page): Promise<() => Promise<(User | null)[]>> {
  await page.evaluate(() => {
    const w = window as unknown as { userEvents: unknown[] }
    w.userEvents = []
    window.latch?.on('user', (u) => w.userEvents.push(u))
  })
  return () =>
    page.evaluate(() => (window as unknown as { userEvents: (User | null)[] }).userEvents)
}

/** The names of these events as the page received them, from the moment this is called. */
export async function recordEvents(
  page: Page,
  names: readonly HostEventName[],
): Promise<() => Promise<string[]>> {
  await page.evaluate((events) => {
    const w = window as unknown as { hostEvents: string[] }
    w.hostEvents = []
    for (const name of events) window.latch?.on(name, () => w.hostEvents.push(name))
  }, names)
  return () => page.evaluate(() => (window as unknown as { hostEvents: string[] }).hostEvents)
}

/** An in-app wallet account as the server links it. */
export function expectInAppWallet(
  wallet: WalletAccount | undefined,
  recoveryMethod: 'latch' | 'user-passcode' | 'passkey',
): WalletAccount {
  expect(wallet).toMatchObject({
    type: 'wallet',
    chainType: 'ethereum',
    walletClient: 'latch',
    walletClientType: 'latch',
    connectorType: 'embedded',
    recoveryMethod,
  })
  expect(wallet?.address).toMatch(/^0x[0-9a-fA-F]{40}$/)
  return wallet as WalletAccount
}

/**
 * The created screen's 4.5 s run out at once (runOutPause), for specs that only pass by it;
 * `call` is the createWallet() it belongs to (a user who is not new gets no created screen).
 */
export const runOutCreatedScreen = (hp: HostPage, call: Promise<unknown>) =>
  runOutPause(hp.page, screen(hp.modal, SCREENS.created), WALLET_CREATED_SCREEN_MS, call)

/**
 * createWallet() on an app that creates without a passcode, to its account: the created screen
 * run out (runOutCreatedScreen).
 */
export async function createWallet(hp: HostPage): Promise<WalletAccount> {
  const pending = walletCall<WalletAccount>(hp.page, 'createWallet')
  await runOutCreatedScreen(hp, pending)
  return expectInAppWallet(expectOk(await settle(pending, 'createWallet()')), 'latch')
}

/**
 * createWallet() on an app that asks for a passcode: the create screen, the six boxes, 'Set
 * passcode'; resolves with the account (after the created screen, if the modal shows it).
 */
export async function createWithPasscode(hp: HostPage, passcode: string): Promise<WalletAccount> {
  const pending = walletCall<WalletAccount>(hp.page, 'createWallet')
  await visit(hp, SCREENS.create)
  await enterPasscode(hp.modal, passcode)
  await hp.modal.getByRole('button', { name: 'Set passcode' }).click()
  await runOutCreatedScreen(hp, pending)
  return expectInAppWallet(expectOk(await settle(pending, 'createWallet()')), 'user-passcode')
}

/** recoverWallet() through the recovery screen with this passcode. */
export async function recoverWithPasscode(hp: HostPage, passcode: string): Promise<WalletAccount> {
  const pending = walletCall<WalletAccount>(hp.page, 'recoverWallet')
  await visit(hp, SCREENS.recovery)
  await enterPasscode(hp.modal, passcode)
  await hp.modal.getByRole('button', { name: 'Recover your account' }).click()
  return expectOk(await settle(pending, 'recoverWallet()'))
}

/** The recovery screen's message after a submit, once it shows `text`. */
export const recoveryMessage = (modal: FrameLocator, text: string) =>
  screen(modal, SCREENS.recovery).getByText(text)

/** A share store in memory, for the frame's own code run in this process. */
function memoryStore(): ShareStore & { shares: Map<string, Uint8Array> } {
  const shares = new Map<string, Uint8Array>()
  return {
    shares,
    persistent: false,
    get: (address) => shares.get(address.toLowerCase()),
    set: (address, share) => shares.set(address.toLowerCase(), share),
  }
}

/** Bytes as every text form a leak could take: hex (any case, with or without 0x), base64(url). */
function textForms(bytes: Uint8Array): string[] {
  const b64 = Buffer.from(bytes).toString('base64')
  return [
    Buffer.from(bytes).toString('hex'),
    b64.replace(/=+$/, ''),
    Buffer.from(bytes).toString('base64url'),
  ]
}

/**
 * The wallet frame's fetch, made from this process: the session's wallet credential minted with
 * the server secret (only a test may) and the fetch metadata the frame's own requests carry.
 */
export function frameFetchFrom(h: Harness, appId: string, accessToken: string): typeof fetch {
  const claims = JSON.parse(Buffer.from(accessToken.split('.')[1] ?? '', 'base64url').toString())
  const sid = String((claims as { sid?: unknown }).sid)
  const credential = `${walletCredentialName(sid)}=${walletCredentialValue(h.api.deps, appId, sid)}`
  return (url, init = {}) => {
    const headers = new Headers(init.headers)
    headers.set('cookie', credential)
    headers.set('sec-fetch-site', 'same-origin')
    return fetch(url, { ...init, headers })
  }
}

export interface KeyMaterial {
  privateKey: Uint8Array
  /** Every text form of the key and of every possible share of it (any x coordinate). */
  forms: string[]
  /** The auth share's hex, as the server releases it to the wallet frame. */
  authShareHex: string
}

/**
 * The wallet's private key and every share it could have, obtained the way only a test can:
 * the auth share from the server's own store (unsealed with the server secret), the recovery
 * share by running the frame's own recovery code in this process against the API (with the
 * passcode, if any), the two combined with the frame's combineShares (which checks the address).
 * A 2-of-3 share is a point of a line over GF(256); the line through two shares gives the share
 * at every other x, the device share among them, so all 255 are returned.
 */
export async function keyMaterial(
  h: Harness,
  appId: string,
  address: string,
  accessToken: string,
  passcode?: string,
): Promise<KeyMaterial> {
  const row = await h.api.deps.db
    .selectFrom('wallets')
    .select(['id', 'app_id', 'user_id', 'address', 'auth_share_sealed', 'recovery_sealed'])
    .where('app_id', '=', appId)
    .where('address', '=', address.toLowerCase())
    .executeTakeFirstOrThrow()
  const authShareHex = openWalletRecord(h.api.deps, row).authShare
  const auth = new Uint8Array(Buffer.from(authShareHex, 'hex'))
  const store = memoryStore()
  const core = walletCore({
    api: fetchApi(h.apiDirectUrl, appId, frameFetchFrom(h, appId, accessToken)),
    store,
  })
  await core.recover({
    address: address as `0x${string}`,
    accessToken,
    ...(passcode ? { recoveryPin: passcode } : {}),
  })
  const recovery = store.get(address)
  if (!recovery) throw new Error('the frame code recovered no share')
  const privateKey = await combineShares([auth, recovery], address)
  const forms = textForms(privateKey)
  const { combine } = await import('shamir-secret-sharing')
  const last = auth.length - 1
  for (let x = 1; x < 256; x++) {
    // Shifting both x coordinates by x (GF(256) addition is XOR) moves the line's value at x to 0.
    const shifted = [auth, recovery].map((s) => {
      const c = new Uint8Array(s)
      c[last] = (c[last] ?? 0) ^ x
      return c
    })
    const y = await combine(shifted)
    const share = new Uint8Array([...y, x])
    forms.push(...textForms(y), ...textForms(share))
  }
  return { privateKey, forms: [...new Set(forms)], authShareHex }
}

/** The forms of `material` found in `corpus` (case-insensitive for hex). */
export function leaks(material: KeyMaterial, corpus: string): string[] {
  const lower = corpus.toLowerCase()
  return material.forms.filter((f) =>
    /^[0-9a-f]+$/.test(f) ? lower.includes(f) : corpus.includes(f),
  )
}

/** What the host page and the modal received, and what they sent to and got from the API. */
export interface Traffic {
  /** Messages received by any frame not on the wallet origin, as text (bytes as hex). */
  messages: string[]
  /** Request URLs and bodies, and response bodies, of frames not on the wallet origin. */
  http: string[]
  /** Response bodies the wallet frame received (the control: its shares are seen here). */
  walletHttp: string[]
  /** All of it outside the wallet origin, once every response body has been read. */
  corpus(): Promise<string>
}

/**
 * An init script for every frame: each message event the frame receives, on the window or on a
 * MessagePort (penpal answers over a port after its handshake), goes to the test as text.
 */
const MESSAGE_RECORDER = `(() => {
  const send = window.__latchRecord
  if (typeof send !== 'function') return
  const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')
  const text = (data) => {
    try {
      return JSON.stringify(data, (k, v) =>
        v instanceof ArrayBuffer ? hex(new Uint8Array(v))
        : ArrayBuffer.isView(v) ? hex(new Uint8Array(v.buffer, v.byteOffset, v.byteLength))
        : v)
    } catch { return String(data) }
  }
  const record = (e) => send(String(text(e.data)))
  addEventListener('message', record, true)
  const add = MessagePort.prototype.addEventListener
  const watched = new WeakSet()
  const watch = (port) => { if (!watched.has(port)) { watched.add(port); add.call(port, 'message', record) } }
  MessagePort.prototype.addEventListener = function (type, ...rest) {
    if (type === 'message') watch(this)
    return add.call(this, type, ...rest)
  }
  const d = Object.getOwnPropertyDescriptor(MessagePort.prototype, 'onmessage')
  Object.defineProperty(MessagePort.prototype, 'onmessage', {
    configurable: true, enumerable: d.enumerable, get: d.get,
    set(fn) { watch(this); d.set.call(this, fn) },
  })
})()`

/**
 * For open()'s `prepare`: records the context's traffic outside the wallet origin (`apiUrl`'s
 * wallet frame is told apart by its URL, /apps/{id}/embedded-wallets).
 */
export async function recordTraffic(context: BrowserContext, apiUrl: string): Promise<Traffic> {
  const isWalletFrame = (url: string) =>
    url.startsWith(apiUrl) && /\/apps\/[^/]+\/embedded-wallets/.test(url)
  const messages: string[] = []
  const http: string[] = []
  const walletHttp: string[] = []
  const reading: Promise<unknown>[] = []
  const frameUrl = (get: () => { url(): string }) => {
    try {
      return get().url()
    } catch {
      return ''
    }
  }
  await context.exposeBinding('__latchRecord', (source, data: unknown) => {
    if (!isWalletFrame(source.frame.url())) messages.push(String(data))
  })
  await context.addInitScript(MESSAGE_RECORDER)
  context.on('request', (request) => {
    if (isWalletFrame(frameUrl(() => request.frame()))) return
    http.push(`${request.method()} ${request.url()} ${request.postData() ?? ''}`)
  })
  context.on('response', (response) => {
    const wallet = isWalletFrame(frameUrl(() => response.request().frame()))
    reading.push(
      response.text().then(
        (body) => (wallet ? walletHttp : http).push(body),
        () => undefined,
      ),
    )
  })
  return {
    messages,
    http,
    walletHttp,
    async corpus() {
      await Promise.allSettled(reading)
      return [...messages, ...http].join('\n')
    },
  }
}

/** The wallet frame as the modal shows it over a screen, for an approval it draws itself. */
export const walletFrameOf = (hp: Pick<HostPage, 'modal'>) =>
  hp.modal.frameLocator('[data-testid="latch-wallet-frame"]')

/**
 * Clicks the wallet frame's approval button (named `name`) once it armed: it takes a click only
 * after it has been visible and unchanged for a moment.
 */
export async function clickApproval(hp: Pick<HostPage, 'modal'>, name: string): Promise<void> {
  const button = walletFrameOf(hp).getByRole('button', { name })
  await button.waitFor({ state: 'visible', timeout: WAIT_MS })
  await expect.poll(() => button.getAttribute('aria-disabled'), { timeout: WAIT_MS }).toBeNull()
  await button.click({ timeout: WAIT_MS })
}

/** The pairing code the wallet frame shows, digits only. */
export async function shownCode(hp: Pick<HostPage, 'modal'>): Promise<string> {
  const shown = walletFrameOf(hp).getByTestId('wallet-approval-pairing-code')
  await shown.waitFor({ state: 'visible', timeout: WAIT_MS })
  const code = ((await shown.textContent()) ?? '').replace(/\s+/g, '')
  expect(code).toMatch(/^\d{6}$/)
  return code
}
