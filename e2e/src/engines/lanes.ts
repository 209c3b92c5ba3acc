/**
 * The engine lanes: the same visitor's flows in Firefox and in WebKit (firefox.spec.ts,
 * webkit.spec.ts), one stack and one browser per file, a fresh profile per page (but WebKit's
 * cross-site refusal tests, see `refusing`, and the fork, which starts from the wallet flow's
 * signed-in page, see `walletTests`), on the stack's `example.com`-style names: the host
 * page on www.example.org (cross-site) or www.example.com (same-site: Latch on the host's own
 * subdomains). Skipped, saying why, only where the browser's binaries are absent (.ci/run
 * installs them).
 */
import type { Hex } from '@latch/shared'
import { TABLES } from '@latch/shared/i18n/all'
import { recoverMessageAddress } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { newEmail } from '../flows.ts'
import { freePort, WAIT_MS } from '../harness.ts'
import { TEST_WALLET_KEY } from '../injected-wallet.ts'
import {
  type Engine,
  type EngineBrowser,
  type EnginePage,
  launchEngine,
  MODAL,
  missing,
  WALLET,
  waitIn,
} from './driver.ts'
import {
  createWallet,
  currentUser,
  expectAccessible,
  forkThroughMetaMask,
  injectWallet,
  ok,
  openHost,
  rejected,
  screenOf,
  signInByEmail,
  signThroughScreen,
  start,
  testId,
  waitDialog,
} from './flows.ts'
import { type EngineStack, type Layout, startEngineStack } from './stack.ts'

export interface LaneExpectations {
  /**
   * Whether the browser keeps Latch's cookies (the refresh cookie, the wallet credential) in
   * the cross-site frames: then the wallet and the fork work cross-site; otherwise the wallet
   * refuses at once with wallet_sign_in_required there, and the fork is run same-site.
   */
  crossSiteCookies: boolean
}

const walletSettings = {
  embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: false },
} as const

/**
 * What the wallet flow's first test leaves for the tests after it: its app, its visitor and
 * wallet, and the page, still signed in, until the fork takes it.
 */
interface MadeWallet {
  appId: string
  email: string
  userId: string
  address: string
  page: EnginePage | undefined
}

/** Expects `signature` of `message` to be the wallet's. */
async function signsAs(wallet: { address: string }, message: string, signature: Hex) {
  expect((await recoverMessageAddress({ message, signature })).toLowerCase()).toBe(
    wallet.address.toLowerCase(),
  )
}

/**
 * Signs in by code, creates an automatic-recovery wallet and signs through the review screen;
 * the page stays open (signed in) when `keepPage`.
 */
async function makeWallet(
  stack: EngineStack,
  browser: EngineBrowser,
  layout: Layout,
  keepPage: boolean,
): Promise<MadeWallet> {
  const app = await stack.createApp(walletSettings)
  const email = newEmail(`${browser.engine}-wallet`)
  const page = await browser.newPage()
  await openHost(page, stack, layout, { appId: app.id })
  const { user } = await signInByEmail(page, stack, email)
  const wallet = await createWallet(page)
  const message = `Signed in ${browser.engine}, ${layout}`
  await signsAs(wallet, message, await signThroughScreen(page, message))
  if (!keepPage) await page.close()
  return {
    appId: app.id,
    email,
    userId: user.id,
    address: wallet.address,
    page: keepPage ? page : undefined,
  }
}

export function engineLanes(engine: Engine, expected: LaneExpectations): void {
  const absent = missing(engine)
  if (absent) {
    describe(`${engine} lane`, () => {
      test.skip(`skipped: ${absent}`, () => {})
    })
    return
  }
  let stack: EngineStack | undefined
  let browser: EngineBrowser | undefined
  // The browser starts while the stack does: it needs only the proxy's port.
  beforeAll(async () => {
    const proxyPort = await freePort()
    const [started, launched] = await Promise.allSettled([
      startEngineStack({ proxyPort }),
      launchEngine(engine, proxyPort),
    ])
    if (started.status === 'fulfilled') stack = started.value
    if (launched.status === 'fulfilled') browser = launched.value
    if (started.status === 'rejected') throw started.reason
    if (launched.status === 'rejected') throw launched.reason
  })
  afterAll(async () => {
    await closeRefusing()
    for (const wallet of Object.values(made)) await wallet?.page?.close()
    await browser?.close()
    await stack?.close()
  })
  const lane = () => {
    if (!stack || !browser) throw new Error(`the ${engine} lane did not start (see beforeAll)`)
    return { stack, browser }
  }
  // The wallet flow, in three tests sharing one visitor: the first signs in, creates and signs,
  // and leaves its page signed in; the fork starts from that page (the sign-in is not what it
  // proves), and the recovery signs that wallet's owner in on a fresh profile. Each makes what
  // it needs itself when the test before did not pass (or run). A page the fork link signed in
  // is no fresh sign-in (its session must be paired before it may use the wallet): the recovery
  // has a fresh profile of its own.
  const made: Partial<Record<Layout, MadeWallet>> = {}
  const walletTests = (layout: Layout, forkAndRecover: boolean) => {
    test('behavior: sign in by code, create, sign through the review screen', async () => {
      const { stack, browser } = lane()
      made[layout] = await makeWallet(stack, browser, layout, forkAndRecover)
    })
    if (!forkAndRecover) return
    test('behavior: the session fork: the link MetaMask would open signs the same user in on a fresh profile', async () => {
      const { stack, browser } = lane()
      const wallet = made[layout]
      let page = wallet?.page
      let userId = wallet?.userId
      if (wallet) wallet.page = undefined
      if (!page || !userId) {
        page = await browser.newPage()
        await openHost(page, stack, layout)
        userId = (await signInByEmail(page, stack, newEmail(`${browser.engine}-fork`))).user.id
      }
      const forked = await forkThroughMetaMask(page)
      const host = stack.hostUrl(layout)
      expect(new URL(forked).origin).toBe(host)
      await page.close()
      const elsewhere = await browser.newPage()
      await openHost(elsewhere, stack, layout, { path: forked.slice(host.length) })
      expect((await currentUser(elsewhere))?.id).toBe(userId)
      await elsewhere.close()
    })
    test("behavior: on a fresh profile, the wallet's owner signs in, recovers it without a prompt and signs with the same address", async () => {
      const { stack, browser } = lane()
      const wallet = made[layout] ?? (await makeWallet(stack, browser, layout, false))
      const fresh = await browser.newPage()
      await openHost(fresh, stack, layout, { appId: wallet.appId })
      await stack.ageCodes(wallet.email)
      await signInByEmail(fresh, stack, wallet.email)
      const again = `Recovered in ${browser.engine}, ${layout}`
      await signsAs(wallet, again, await signThroughScreen(fresh, again))
      await fresh.close()
    })
  }

  // Where the browser refuses Latch's cookies cross-site (WebKit), one profile serves the
  // cross-site tests that need only that (a refusal keeps nothing; each test has its own app and
  // visitor), in file order: the fresh-profile start is not what they prove. The credential
  // window's test, which leaves first-party cookies, has its own.
  let refusingPage: EnginePage | undefined
  const refusing = async () => {
    refusingPage ??= await lane().browser.newPage()
    return refusingPage
  }
  async function closeRefusing() {
    const page = refusingPage
    refusingPage = undefined
    await page?.close()
  }

  // A flow waits out the modal's pauses and drives a browser without a page clock: seconds
  // each, several times that on a loaded machine.
  // Same-site first: in WebKit, the cross-site refusal of a wallet made same-site uses the
  // wallet made here (another same-site profile, sign-in and creation would prove nothing more).
  describe(`${engine}, same-site (host www.example.com, Latch on example.com)`, {
    timeout: 150_000,
  }, () => {
    // Where cross-site walks the fork and the recovery (Firefox), the first test is enough here.
    walletTests('same-site', !expected.crossSiteCookies)
  })

  describe(`${engine}, cross-site (host www.example.org, Latch on example.com)`, {
    timeout: 150_000,
  }, () => {
    if (expected.crossSiteCookies) {
      walletTests('cross-site', true)
    } else {
      test('error: a wallet made where the credential is kept (same-site), used cross-site: recoverWallet(), signMessage() and exportWallet() reject at once with wallet_sign_in_required, each showing what to do', async () => {
        const { stack, browser } = lane()
        // The same-site flow's wallet (made on profiles of their own); made here when that test
        // did not pass (or run).
        const { appId, email } =
          made['same-site'] ?? (await makeWallet(stack, browser, 'same-site', false))

        const page = await refusing()
        await openHost(page, stack, 'cross-site', { appId })
        await stack.ageCodes(email)
        await signInByEmail(page, stack, email)
        for (const method of ['recoverWallet', 'signMessage', 'exportWallet']) {
          const call = await start(page, method, ...(method === 'signMessage' ? ['Hello'] : []))
          await page.waitFor([MODAL], testId('screen-wallet-refused'))
          expect(rejected(await call.settled(), `${method}()`).code).toBe('wallet_sign_in_required')
          expect(await page.text([MODAL], '.latch-body h1')).toBe(
            'Your wallet can’t open in this browser',
          )
          await page.click([MODAL], testId('wallet-refused-close'))
          await waitDialog(page, false)
        }
      })
    }

    // WebKitWebDriver runs no script and sends no key until the page has loaded, frames
    // included, which the held script keeps from happening: this page's driver does not wait
    // (pageLoadStrategy 'none').
    test('behavior: the landing the modal server rendered: login() shows it before the JavaScript; the address typed and Enter then are carried out once, after hydration', async () => {
      const { stack, browser } = lane()
      const email = newEmail(`${browser.engine}-ssr`)
      const release = stack.holdModalScript()
      const page = await browser.newPage({ pageLoadStrategy: 'none' })
      try {
        // Navigated from the page (goto would wait for the frame's load, which waits for the
        // held script).
        await page.run(
          [],
          (url: string) => {
            setTimeout(() => {
              location.href = url
            })
          },
          stack.hostUrl('cross-site'),
        )
        await waitIn(page, 'the landing painted', [], () => {
          const frame = document.querySelector<HTMLIFrameElement>('[data-testid="latch-frame"]')
          return frame !== null && frame.style.height !== '620px' ? true : null
        })
        const login = await start<{ user: { email?: { address: string } } }>(page, 'login')
        await waitDialog(page, true)
        await page.waitFor([MODAL], testId('email-input'))
        await page.type(
          [MODAL],
          testId('email-input'),
          `${email}${browser.engine === 'webkit' ? '\uE007' : '\n'}`,
        )
        const before = await page.run([MODAL], () => {
          const modal = document.getElementById('root')?.firstElementChild
          return {
            rendered: document.getElementById('root')?.hasAttribute('data-latch-ssr'),
            hydrated: modal ? Object.keys(modal).some((k) => k.startsWith('__reactFiber')) : null,
          }
        })
        expect(before).toEqual({ rendered: true, hydrated: false })
        expect(stack.smtp.messages.filter((m) => m.to === email)).toEqual([])
        release()
        const code = await stack.emailCode(email)
        await page.waitFor([MODAL], screenOf('AWAITING_PASSWORDLESS_CODE'))
        for (let i = 0; i < code.length; i++) {
          await page.type([MODAL], testId(`code-input-${i}`), code.charAt(i))
        }
        const result = ok(await login.settled(WAIT_MS + 5000), 'login()')
        expect(result.user.email?.address).toBe(email)
        expect(stack.smtp.messages.filter((m) => m.to === email)).toHaveLength(1)
      } finally {
        release()
        await page.close()
      }
    })

    test('behavior: a browser wallet (EIP-6963) signs in; the Arabic landing is right to left', async () => {
      const { stack, browser } = lane()
      const app = await stack.createApp({
        loginMethods: ['wallet', 'email'],
        appearance: { showWalletLoginFirst: false },
      })
      // In WebKit, the profile that refuses Latch's cookies cross-site, between the refusal
      // tests: this sign-in leaves nothing there either.
      const page = expected.crossSiteCookies ? await browser.newPage() : await refusing()
      await openHost(page, stack, 'cross-site', { appId: app.id })
      const wallet = await injectWallet(page, TEST_WALLET_KEY)
      try {
        const login = await start<{ user: { linkedAccounts: { address?: string }[] } }>(
          page,
          'login',
        )
        await page.click([MODAL], testId('section-wallet-toggle'))
        await page.click([MODAL], testId('wallet-option'))
        const result = ok(await login.settled(), 'login()')
        expect(result.user.linkedAccounts.map((a) => a.address)).toContain(wallet.address)
      } finally {
        await wallet.stop()
      }

      await openHost(page, stack, 'cross-site', { lang: 'ar' })
      await start(page, 'login')
      await page.waitFor([MODAL], screenOf('LANDING'))
      const ar = TABLES.ar.m
      expect(await page.text([MODAL], `${screenOf('LANDING')} h1`)).toBe(ar.title)
      await expectAccessible(page, [MODAL], 'LANDING in Arabic')
      expect(
        await page.run([MODAL], () => ({
          lang: document.documentElement.lang,
          dir: document.documentElement.dir,
        })),
      ).toEqual({ lang: 'ar', dir: 'rtl' })
      if (expected.crossSiteCookies) await page.close()
    })

    if (!expected.crossSiteCookies) {
      test('error: the browser refuses the wallet credential in the cross-site frame: createWallet() rejects at once with wallet_sign_in_required and the modal says what to do', async () => {
        const { stack } = lane()
        const app = await stack.createApp(walletSettings)
        // The profile the tests before used cross-site (nothing was kept there); the first-party
        // visit below is the first thing that leaves a cookie of Latch's in it.
        const page = await refusing()
        await openHost(page, stack, 'cross-site', { appId: app.id })
        const email = newEmail(`${engine}-refused`)
        await signInByEmail(page, stack, email)
        const created = await start(page, 'createWallet')
        await page.waitFor([MODAL], testId('screen-wallet-refused'))
        await expectAccessible(page, [MODAL], 'the refused view')
        expect(rejected(await created.settled(), 'createWallet()').code).toBe(
          'wallet_sign_in_required',
        )
        expect(await page.text([MODAL], '.latch-body h1')).toBe(
          'Your wallet can’t open in this browser',
        )
        expect(await page.text([MODAL], '[data-latch-announcer]')).toBe(
          'Your wallet can’t open in this browser',
        )
        await page.click([MODAL], testId('wallet-refused-close'))
        await waitDialog(page, false)
        // The wallet frame starts without storage access (requestStorageAccess() on a click
        // would grant it with no prompt here, and still no cookie: wallet-frame/README.md).
        expect(
          await page.run([MODAL, WALLET], async () => ({
            api: typeof document.requestStorageAccess,
            granted: await document.hasStorageAccess(),
          })),
        ).toEqual({ api: 'function', granted: false })
        // The refresh cookie is refused too: forking, a use of it, ends the session, and the
        // call rejects at once with why while the modal shows the refused-browser view.
        const fork = await start(page, 'forkSession')
        await page.waitFor([MODAL], testId('screen-wallet-refused'))
        expect(rejected(await fork.settled(), 'forkSession()').code).toBe('session_cookie_refused')
        // The session has ended: no window can sign it in again as it was.
        expect(
          await page.run(
            [MODAL],
            (css: string) => document.querySelector(css) === null,
            testId('wallet-refused-window'),
          ),
        ).toBe(true)
        await page.click([MODAL], testId('wallet-refused-close'))
        await waitDialog(page, false)

        // After a first-party visit that left a cookie on the API origin, the wallet frame has
        // storage access (it sends that cookie), yet the credential is still refused: it is
        // set on the answer to the modal's sign-in fetch, from the modal's frame, which has
        // none. The path sets it in a first-party window (the credential window test).
        await page.goto(`${stack.apiUrl}/readyz`)
        await page.run([], () => {
          // biome-ignore lint/suspicious/noDocumentCookie: what a first-party page of the API would leave, in one line
          document.cookie = 'visited=1; Secure; SameSite=None; Path=/; Max-Age=600'
        })
        await openHost(page, stack, 'cross-site', { appId: app.id })
        await stack.ageCodes(email)
        await signInByEmail(page, stack, email)
        const again = await start(page, 'createWallet')
        await page.waitFor([MODAL], testId('screen-wallet-refused'))
        expect(rejected(await again.settled(), 'createWallet()').code).toBe(
          'wallet_sign_in_required',
        )
        expect(
          await page.run([MODAL, WALLET], async () => ({
            granted: await document.hasStorageAccess(),
            cookie: document.cookie,
          })),
        ).toEqual({ granted: true, cookie: 'visited=1' })
        await closeRefusing()
      })
      test('behavior: the refused view\'s "Sign in again in a new window": a sign-in by code in a window of the modal origin sets the credential first-party; the wallet then creates and signs cross-site, and a reload keeps the session', async () => {
        const { stack, browser } = lane()
        const app = await stack.createApp(walletSettings)
        const email = newEmail(`${engine}-window`)
        const page = await browser.newPage()
        await openHost(page, stack, 'cross-site', { appId: app.id })
        const { user } = await signInByEmail(page, stack, email)
        const refused = await start(page, 'createWallet')
        await page.waitFor([MODAL], testId('screen-wallet-refused'))
        expect(rejected(await refused.settled(), 'createWallet()').code).toBe(
          'wallet_sign_in_required',
        )
        await page.click([MODAL], testId('wallet-refused-window'))
        const window = await page.popup()
        await window.waitFor([], testId('credential-window'))
        await expectAccessible(window, [], 'the credential window')
        expect(await window.text([], 'h1')).toBe('Enter confirmation code')
        await window.type([], testId('credential-code'), await stack.emailCode(email))
        await window.click([], testId('credential-submit'))
        expect(await page.text([MODAL], testId('wallet-refused-status'))).toBe(
          'Signed in again. Your wallet can open now: try again.',
        )
        await expectAccessible(page, [MODAL], 'the refused view, signed in again')
        await page.click([MODAL], testId('wallet-refused-close'))
        await waitDialog(page, false)
        expect((await currentUser(page))?.id).toBe(user.id)

        const wallet = await createWallet(page)
        const signsAs = async (message: string, signature: Hex) =>
          expect((await recoverMessageAddress({ message, signature })).toLowerCase()).toBe(
            wallet.address.toLowerCase(),
          )
        await signsAs('After the window', await signThroughScreen(page, 'After the window'))
        // The refresh cookie came first-party too: a reload restores the session, and the new
        // frame (its credential sent) signs with the same address.
        await openHost(page, stack, 'cross-site', { appId: app.id })
        expect((await currentUser(page))?.id).toBe(user.id)
        await signsAs('After a reload', await signThroughScreen(page, 'After a reload'))
        await page.close()
      })
    }
  })
}
