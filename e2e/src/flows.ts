/** Steps the specs share: calling the host SDK in the page, and walking the modal's screens. */
import { type LoginResult, SUCCESS_CLOSE_DELAY_MS, type User } from '@latch/shared'
import type { ConsoleMessage, Frame, FrameLocator, Locator, Page } from 'playwright-core'
import { expect } from 'vitest'
import {
  BEFORE_HYDRATION_KEY,
  SERVER_RENDERED_ATTR,
} from '../../modal-app/src/ssr/before-hydration.ts'
import { expectAccessible, modalFrame } from './axe.ts'
import { type Harness, type HostPage, unique, WAIT_MS, withTimeout } from './harness.ts'
import './window.ts'

export interface CallError {
  code: string | null
  message: string
  name: string | null
}
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: CallError }

type LatchMethod =
  | 'login'
  | 'link'
  | 'unlink'
  | 'logout'
  | 'getUser'
  | 'getAccessToken'
  | 'connectWallet'

/**
 * Calls a method of `window.latch` in the page and answers how it settled, never throwing for a
 * rejection (the spec asserts on it).
 * @example const pending = latchCall<LoginResult>(page, 'login')
 */
export function latchCall<T>(
  page: Page,
  method: LatchMethod,
  ...args: unknown[]
): Promise<Outcome<T>> {
  return (
    page
      .evaluate(
        async ([name, params]) => {
          try {
            const client = window.latch as unknown as Record<string, (...a: unknown[]) => unknown>
            const fn = client[name]
            if (typeof fn !== 'function') throw new Error(`window.latch.${name} is not a function`)
            const value = await fn.apply(window.latch, params)
            return { ok: true as const, value: value as T }
          } catch (e) {
            const err = (e ?? {}) as { code?: unknown; message?: unknown; name?: unknown }
            return {
              ok: false as const,
              error: {
                code: typeof err.code === 'string' ? err.code : null,
                message: typeof err.message === 'string' ? err.message : String(e),
                name: typeof err.name === 'string' ? err.name : null,
              },
            }
          }
        },
        [method, args] as const,
      )
      // The page may close with the call still pending (a failed test): settle, do not throw.
      .catch((e: unknown) => ({
        ok: false as const,
        error: { code: null, message: String(e), name: 'PlaywrightError' },
      })) as Promise<Outcome<T>>
  )
}

/** Asserts a call resolved and answers its value. */
export function expectOk<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) {
    throw new Error(
      `expected the call to resolve; it rejected with ${JSON.stringify(outcome.error)}`,
    )
  }
  return outcome.value
}

/** Asserts a call rejected and answers its error. */
export function expectRejected<T>(outcome: Outcome<T>): CallError {
  if (outcome.ok) {
    throw new Error(
      `expected the call to reject; it resolved with ${JSON.stringify(outcome.value)}`,
    )
  }
  return outcome.error
}

export const screen = (modal: FrameLocator, id: string) => modal.getByTestId(`screen-${id}`)

/**
 * Waits for a screen of the modal and holds it to axe (WCAG 2.1 A and AA, 0 violations): every
 * screen a spec reaches through here is checked, the wallet screens of later issues included.
 * @example await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
 */
export async function visit(hp: Pick<HostPage, 'page' | 'modal'>, id: string): Promise<void> {
  await screen(hp.modal, id).waitFor({ state: 'visible' })
  await expectAccessible(await modalFrame(hp.page), `the ${id} screen`)
}

/**
 * A script of the page (or of one of its frames) calling the wallet API itself, as the wallet
 * frame would: a POST with its credentials (the wallet cookie goes along where the browser
 * sends it), the access token, the app id and the modal's client header. Status 0, the error
 * as the body, when the browser refuses to send it (CORS).
 */
export function walletApiFromPage(
  target: Page | Frame,
  url: string,
  call: { appId: string; token: string; address: string },
): Promise<{ status: number; body: string }> {
  return target.evaluate(
    async ([url, appId, bearer, address]) => {
      try {
        const res = await fetch(url, {
          method: 'POST',
          credentials: 'include',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${bearer}`,
            'latch-app-id': appId,
            'latch-client': 'latch-modal',
          },
          body: JSON.stringify({ address }),
        })
        return { status: res.status, body: await res.text() }
      } catch (e) {
        return { status: 0, body: String(e) }
      }
    },
    [url, call.appId, call.token, call.address] as const,
  )
}

/** A fresh address for this run, on a domain that never receives real mail. */
export const newEmail = (tag = 'user') => `${unique(tag)}@example.com`.toLowerCase()

let phoneSequence = 0
/** A fresh valid US number: the national form typed, the E.164 form the server sees. */
export function newPhone(): { typed: string; e164: string } {
  phoneSequence += 1
  const line = String((process.pid * 7 + Date.now() + phoneSequence * 9973) % 10_000).padStart(
    4,
    '0',
  )
  let exchange = 200 + ((process.pid + phoneSequence) % 700)
  // N11 exchanges (211, 311, ... 911) are service codes, not subscriber numbers.
  if (exchange % 100 === 11) exchange += 1
  return { typed: `(201) ${exchange}-${line}`, e164: `+1201${exchange}${line}` }
}

/** Another 6-digit code than the given one. */
export const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0')

/**
 * Whether the modal frame's root holds the server's landing, and whether React has taken it over
 * (React DOM marks the elements it hydrated).
 */
export function modalRootState(
  frame: Frame,
): Promise<{ serverRendered: boolean; hydrated: boolean }> {
  return frame.evaluate((attr) => {
    const root = document.getElementById('root')
    const modal = root?.firstElementChild
    return {
      serverRendered: root?.hasAttribute(attr) ?? false,
      hydrated: modal ? Object.keys(modal).some((k) => k.startsWith('__reactFiber')) : false,
    }
  }, SERVER_RENDERED_ATTR)
}

/** Where openSection's frame keeps the pointer events it saw during its click. */
const CLICK_LOG_KEY = '__latchE2eClicks'

/**
 * Opens a section of the landing (wallet, email, phone) by its toggle and waits until it is
 * open. If it does not open, the error says what the modal's page held: whether the server
 * rendered the landing and React took it over, each toggle's state, the clicks the page's
 * inline script held before hydration, the pointer events the frame saw from the click on and
 * the warnings and errors it logged meanwhile.
 */
export async function openSection(
  modal: FrameLocator,
  section: 'wallet' | 'email' | 'phone',
): Promise<void> {
  const toggle = modal.getByTestId(`section-${section}-toggle`)
  // What the click did and what the frame said meanwhile, for the error below.
  const page = modal.owner().page()
  const said: string[] = []
  const listen = (msg: ConsoleMessage) => {
    if (msg.type() === 'warning' || msg.type() === 'error')
      said.push(`[${msg.type()}] ${msg.text()}`)
  }
  page.on('console', listen)
  try {
    // The listeners go in once per document; a later call only empties the log.
    await toggle.evaluate((_, key) => {
      const log = window as unknown as Record<string, string[] | undefined>
      const known = log[key]
      if (known) {
        known.length = 0
        return
      }
      log[key] = []
      for (const type of ['pointerdown', 'mousedown', 'mouseup', 'click']) {
        document.addEventListener(
          type,
          (e) => {
            const target = e.target instanceof Element ? e.target : null
            const id = target?.closest('[data-testid]')?.getAttribute('data-testid')
            log[key]?.push(
              `${type}@${Math.round(performance.now())}:${target?.tagName ?? '?'}/${id ?? '-'}`,
            )
          },
          { capture: true },
        )
      }
    }, CLICK_LOG_KEY)
    await toggle.click()
    await expect.poll(() => toggle.getAttribute('aria-expanded'), { timeout: WAIT_MS }).toBe('true')
  } catch (e) {
    const frame = await modal
      .owner()
      .elementHandle()
      .then((h) => h?.contentFrame())
      .catch(() => null)
    const state = frame
      ? await Promise.all([
          modalRootState(frame),
          frame.evaluate(
            (keys) => {
              const held = (window as unknown as Record<string, { actions: object[] } | undefined>)[
                keys[0]
              ]
              return {
                toggles: [...document.querySelectorAll('[data-testid$="-toggle"]')].map(
                  (t) => `${t.getAttribute('data-testid')}=${t.getAttribute('aria-expanded')}`,
                ),
                held: held ? held.actions.map((a) => ({ ...a, field: undefined })) : null,
                events: (window as unknown as Record<string, string[] | undefined>)[keys[1]],
              }
            },
            [BEFORE_HYDRATION_KEY, CLICK_LOG_KEY] as const,
          ),
        ])
          .then(([root, held]) => ({ ...root, ...held, console: said }))
          .catch((err: unknown) => String(err))
      : 'no frame'
    throw new Error(`the ${section} section did not open: ${JSON.stringify(state)}`, { cause: e })
  } finally {
    page.off('console', listen)
  }
}

export async function submitEmail(modal: FrameLocator, email: string): Promise<void> {
  await modal.getByTestId('email-input').fill(email)
  await modal.getByTestId('email-submit').click()
}

export async function submitPhone(modal: FrameLocator, phone: string): Promise<void> {
  await modal.getByTestId('phone-input').fill(phone)
  await modal.getByTestId('phone-submit').click()
}

/** How a spec enters a code or a passcode into the boxes (enterCode, enterPasscode). */
export interface BoxEntry {
  /**
   * One character into each box, as a person types. Without it the whole text goes into the
   * first box at once, as a browser's one-time-code autofill or a paste puts it there, and
   * the boxes fill from it.
   */
  typed?: boolean
}

/**
 * Enters a code on the code screen as the visitor's browser autofills it: the whole code into
 * the first box (its autocomplete is `one-time-code`), which fills all six. The specs of the
 * code screen itself type it, one character per box (`{ typed: true }`); the others only get
 * past the screen, and each typed box costs a round of Playwright's actionability checks and a
 * render of the screen (docs/performance.md, "Codes entered at once").
 */
export function enterCode(modal: FrameLocator, code: string, entry: BoxEntry = {}): Promise<void> {
  return enterBoxes(modal.locator('[data-testid^="code-input-"]'), code, entry)
}

/** Enters `text` into a row of one-character boxes (`boxes`, in order), as BoxEntry says. */
export async function enterBoxes(
  boxes: Locator,
  text: string,
  { typed = false }: BoxEntry = {},
): Promise<void> {
  if (!typed) return boxes.first().fill(text)
  for (let i = 0; i < text.length; i++) await boxes.nth(i).fill(text.charAt(i))
}

/** The six boxes' values, read in one go. */
export function codeBoxValues(modal: FrameLocator): Promise<string[]> {
  return modal
    .locator('[data-testid^="code-input-"]')
    .evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value))
}

export const waitEmailCode = (h: Harness, email: string) =>
  withTimeout(
    h.smtp.waitForCode(email, { timeoutMs: WAIT_MS }),
    WAIT_MS + 1000,
    `the code mail to ${email}`,
  )

export const waitSmsCode = (h: Harness, e164: string) =>
  withTimeout(
    h.twilio.waitForCode(e164, { timeoutMs: WAIT_MS }),
    WAIT_MS + 1000,
    `the code SMS to ${e164}`,
  )

/** Settles a pending SDK call within the spec's wait. */
export const settle = <T>(pending: Promise<Outcome<T>>, what = 'the SDK call') =>
  withTimeout(pending, WAIT_MS, what)

/**
 * Runs out a fixed pause of the modal at once, on the page clock the harness installs in every
 * context it opens, once `shown` (the screen or mark the pause keeps up) is visible: the timer
 * the modal set fires as it would, only sooner. Nothing when `call` (the SDK call the pause
 * belongs to) settles first: the modal did not pause. For a spec that only needs to get past the
 * pause; one that checks the screen during it does so before calling this. The clock jumps by
 * `ms` in every frame of the page (what the page dates is that much ahead).
 */
export async function runOutPause(
  page: Page,
  shown: Locator,
  ms: number,
  call: Promise<unknown>,
): Promise<void> {
  const settled = Symbol('settled')
  const first = await Promise.race([
    shown.waitFor({ state: 'visible', timeout: WAIT_MS }),
    call.then(
      () => settled,
      () => settled,
    ),
  ])
  if (first !== settled) await page.clock.fastForward(ms)
}

/**
 * On the code screen: types `code`, runs out the success screen's pause (runOutPause) and
 * answers the result of `pending`, the `login()` the code signs in.
 * @example const { user } = await signedInByCode(hp, code, pending)
 */
export async function signedInByCode(
  hp: Pick<HostPage, 'page' | 'modal'>,
  code: string,
  pending: Promise<Outcome<LoginResult>>,
  what = 'login()',
): Promise<LoginResult> {
  await enterCode(hp.modal, code)
  await runOutPause(hp.page, hp.modal.getByTestId('code-success'), SUCCESS_CLOSE_DELAY_MS, pending)
  return expectOk(await settle(pending, what))
}

/**
 * Signs in by e-mail through the modal, from `login()` to its result (the success screen's pause
 * run out: runOutPause).
 * @example const { user, isNewUser } = await signInByEmail(h(), hp, newEmail())
 */
export async function signInByEmail(h: Harness, hp: HostPage, email: string): Promise<LoginResult> {
  const pending = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  await submitEmail(hp.modal, email)
  const code = await waitEmailCode(h, email)
  await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
  const result = await signedInByCode(hp, code, pending)
  expect(result.user.email?.address).toBe(email)
  return result
}

/** Signs in by SMS through the modal (the app must have SMS login on; the pause run out). */
export async function signInBySms(
  h: Harness,
  hp: HostPage,
  phone: { typed: string; e164: string },
): Promise<LoginResult> {
  const pending = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  await submitPhone(hp.modal, phone.typed)
  const code = await waitSmsCode(h, phone.e164)
  await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
  const result = await signedInByCode(hp, code, pending)
  expect(result.user.phone?.number).toBe(phone.e164)
  return result
}

/** The user the demo page shows (its JSON panel), once it shows one matching `check`. */
export async function demoUser(
  page: Page,
  check: (user: User | null) => boolean,
): Promise<User | null> {
  const panel = page.getByTestId('user')
  const started = Date.now()
  for (;;) {
    const text = (await panel.textContent()) ?? ''
    try {
      const user = JSON.parse(text) as User | null
      if (check(user)) return user
    } catch {
      // Not JSON yet ('loading…').
    }
    if (Date.now() - started > WAIT_MS) throw new Error(`the demo page shows: ${text}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
