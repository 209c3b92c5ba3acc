/**
 * Session fork (docs/behaviour.md, "SESSION_FORK_SCREEN") across two browser contexts: the
 * signed-in visitor forks the session,
 * picks a wallet app, and the page the app's in-app browser would open (taken out of the deep
 * link the modal opened) signs in elsewhere, the token gone from its address bar. The token
 * rides in the fragment, so the request for the link service carries none. It is refused a
 * second time, after its life (the server's default, 2 minutes, checked on the token's row and
 * then moved into the past rather than waited out), and in the address query (leaked). With an
 * automatic-recovery wallet, the link never carries the wallet: the forked page pairs with the
 * code the original device's wallet frame shows on the visitor's click there, then recovers and
 * signs; a wrong code pairs nothing, and the host page redeeming the link itself gets a session,
 * never a share.
 */
import {
  API_PREFIX,
  FORK_RETURN_PARAM,
  type Hex,
  type LatchClient,
  type RefreshResponse,
  type User,
  type WalletAccount,
} from '@latch/shared'
import { forkLink, walletApp } from '@latch/shared/wallet-apps'
import type { BrowserContext, Page } from 'playwright-core'
import { recoverMessageAddress } from 'viem'
import { expect, test } from 'vitest'
import { forkTokenKey } from '../../server/src/sessions/service.ts'
import {
  expectOk,
  expectRejected,
  latchCall,
  newEmail,
  screen,
  settle,
  signInByEmail,
  visit,
} from './flows.ts'
import { type HostPage, WAIT_MS, withTimeout } from './harness.ts'
import { useHarness } from './use-harness.ts'
import {
  clickApproval,
  createWallet,
  passcodeAsked,
  recordScreens,
  SCREENS,
  shownCode,
  signThroughScreen,
  walletCall,
  walletFrameOf,
  walletApp as walletSettingsApp,
} from './wallet-flows.ts'

const FORK_TTL_S = 2 * 60
const SIGN = 'EMBEDDED_WALLET_SIGN_REQUEST_SCREEN'
const h = useHarness()

interface Recorded {
  /** The host's 'warning' events, from the client's creation on. */
  warnings?: string[]
}

/** The addresses the browser requested from the wallet apps' link services. */
const linkRequests: string[] = []

/** The wallet apps' link hosts: answered here, so the popup opens and nothing leaves the machine. */
const WALLET_LINK_HOSTS =
  /^https:\/\/(link\.trustwallet\.com|metamask\.app\.link|go\.cb-w\.com|phantom\.app)\//

/**
 * Answers the wallet apps' links locally, and records the host's warnings from the moment the
 * one-line script sets window.latch (init's warnings come before any later listener).
 */
async function recording(context: BrowserContext): Promise<void> {
  await context.route(WALLET_LINK_HOSTS, (route) => {
    linkRequests.push(route.request().url())
    return route.fulfill({
      status: 200,
      contentType: 'text/html',
      body: '<title>wallet app</title>',
    })
  })
  await context.addInitScript(() => {
    const w = window as unknown as Recorded & { latch?: LatchClient }
    w.warnings = []
    let client: LatchClient | undefined
    Object.defineProperty(window, 'latch', {
      configurable: true,
      get: () => client,
      set(value: LatchClient | undefined) {
        client = value
        value?.on('warning', (message) => w.warnings?.push(String(message)))
      },
    })
  })
}

/** Calls forkSession() in the page (flows.ts's latchCall lists the other methods). */
function forkSession(page: Page) {
  return page.evaluate(async () => {
    try {
      return { ok: true as const, link: await (window.latch as LatchClient).forkSession() }
    } catch (e) {
      const err = e as { code?: string; message?: string }
      return { ok: false as const, code: err.code ?? null, message: err.message ?? String(e) }
    }
  })
}

/**
 * Signs in (on `appId`, the harness's app otherwise) on a fresh page that records warnings, in a
 * context of its own that outlives the test (closed with the file's harness): the tests that
 * fork a session share one visitor (signedVisitor(), walletVisitor()).
 */
async function signedIn(appId?: string): Promise<{ hp: HostPage; user: User }> {
  const hp = await h().open({ kept: true, prepare: recording, ...(appId ? { appId } : {}) })
  const { user } = await signInByEmail(h(), hp, newEmail('fork'))
  return { hp, user }
}

let plainVisitor: Promise<{ hp: HostPage; user: User }> | undefined
/**
 * The signed-in visitor without an in-app wallet whom the tests fork from: each fork is a new
 * link of its own, and the forking page keeps its session (the first test proves it).
 */
const signedVisitor = () => {
  plainVisitor ??= signedIn()
  return plainVisitor
}

let automaticVisitor:
  | Promise<{ visitor: { hp: HostPage; user: User }; wallet: WalletAccount; appId: string }>
  | undefined
/**
 * The signed-in visitor with an automatic-recovery wallet (created by the visitor's click, as
 * ever) whom the pairing tests fork from; each test leaves the modal closed ('Done').
 */
const walletVisitor = () => {
  automaticVisitor ??= (async () => {
    const app = await walletSettingsApp(h(), { requireUserPasswordOnCreate: false })
    const signed = await signedIn(app.id)
    const wallet = await createAutomaticWallet(signed.hp)
    return { visitor: signed, wallet, appId: app.id }
  })()
  return automaticVisitor
}

/** createWallet() on an app without a passcode: an automatic-recovery wallet; the dialog closes. */
async function createAutomaticWallet(hp: HostPage): Promise<WalletAccount> {
  const wallet = await createWallet(hp)
  await dialogOpen(hp.page, false)
  return wallet
}

/** Waits until the host's dialog is open (or closed). */
const dialogOpen = (page: Page, open: boolean) =>
  page.waitForFunction(
    (want) =>
      document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === want,
    open,
    { timeout: WAIT_MS },
  )

/**
 * Forks through MetaMask's in-app browser link (the one app whose link keeps the fragment its
 * own) for the visitor signed in on `signed`, and answers what it opened.
 */
async function forkThroughMetaMask(signed: { hp: HostPage; user: User }): Promise<{
  hp: HostPage
  user: User
  link: string
  page: URL
  token: string
  /** Whether the screen said, before the click, that the wallet goes along. */
  walletNote: boolean
}> {
  const { hp, user } = signed
  const pending = forkSession(hp.page)
  await visit(hp, 'SESSION_FORK_SCREEN')
  const fork = screen(hp.modal, 'SESSION_FORK_SCREEN')
  await expect
    .poll(() => fork.getByRole('heading').textContent(), { timeout: WAIT_MS })
    .toBe('Continue in a wallet app')
  // The apps whose links would send the address to their link service are not offered.
  await expect.poll(() => hp.modal.getByTestId('fork-wallet-trust').count()).toBe(0)
  const metamask = hp.modal.getByTestId('fork-wallet-metamask')
  // The real window.open of the sandboxed modal frame, from the click: a popup on the link.
  const popup = hp.context.waitForEvent('page', { timeout: WAIT_MS })
  linkRequests.length = 0
  await expect.poll(() => metamask.isEnabled(), { timeout: WAIT_MS }).toBe(true)
  const walletNote = (await fork.getByTestId('fork-wallet-note').count()) > 0
  await metamask.click({ timeout: WAIT_MS })
  const result = await withTimeout(pending, WAIT_MS, 'forkSession()')
  if (!result.ok) throw new Error(`forkSession() rejected: ${result.message}`)
  const opened = await popup
  await opened.waitForLoadState('load')
  expect(opened.url()).toBe(result.link)
  await opened.close()
  const link = new URL(result.link)
  expect(link.origin).toBe('https://metamask.app.link')
  expect(link.pathname.startsWith('/dapp/')).toBe(true)
  // The token is the link's own fragment: the request for the link carried none of it.
  const token = new URLSearchParams(link.hash.slice(1)).get(FORK_RETURN_PARAM) ?? ''
  expect(token).toMatch(/^[\w-]{43}$/)
  expect(linkRequests).toHaveLength(1)
  expect(linkRequests[0]).toBe(`${link.origin}${link.pathname}${link.search}`)
  expect(linkRequests[0]).not.toContain(token)
  // The host page itself, as the modal read it (pageUrl), with the token in its fragment.
  const host = new URL(h().hostUrl)
  const page = new URL(
    `${host.protocol}//${link.pathname.slice('/dapp/'.length)}${link.search}${link.hash}`,
  )
  expect(page.origin).toBe(host.origin)
  expect(page.search).not.toContain(token)
  // Exactly the link the shared list makes for that page.
  const app = walletApp('metamask')
  if (!app) throw new Error('MetaMask is not listed')
  expect(result.link).toBe(forkLink(app, page.href))
  return { hp, user, link: result.link, page, token, walletNote }
}

/** Opens the page the wallet app's in-app browser would open, in a fresh context. */
function openInWallet(page: URL): Promise<HostPage> {
  return h().open({
    path: page.pathname + page.search + page.hash,
    prepare: async (context) => {
      await recording(context)
      await recordScreens(context)
    },
  })
}

/** The pairing recorded on the fork token's row (null: never paired). */
const pairingOf = async (token: string) => {
  const row = await h()
    .api.deps.db.selectFrom('fork_tokens')
    .select('paired_mac')
    .where('hash', '=', forkTokenKey(h().api.deps, token))
    .executeTakeFirstOrThrow()
  return row.paired_mac
}

const getUser = async (hp: HostPage) =>
  expectOk(await settle(latchCall<User | null>(hp.page, 'getUser')))

test('behavior: the forked page signs in as the same user in another context, the token off its address bar; both sessions live', async () => {
  const { hp, user, page, walletNote } = await forkThroughMetaMask(await signedVisitor())
  // Without an in-app wallet there is nothing to hand over, and the screen does not say so.
  expect(walletNote).toBe(false)
  const elsewhere = await openInWallet(page)
  expect((await getUser(elsewhere))?.id).toBe(user.id)
  const address = new URL(await elsewhere.page.evaluate(() => location.href))
  expect(address.href).not.toContain(FORK_RETURN_PARAM)
  expect(address.pathname).toBe(page.pathname)
  expect(await elsewhere.page.evaluate(() => (window as unknown as Recorded).warnings)).toEqual([])
  // A session of its own: an access token for the same user, and a reload keeps it.
  const token = expectOk(await settle(latchCall<string | null>(elsewhere.page, 'getAccessToken')))
  expect(token).toEqual(expect.any(String))
  await elsewhere.page.reload({ waitUntil: 'load' })
  expect((await getUser(elsewhere))?.id).toBe(user.id)
  // The forking page keeps its own session (it took the rotated pair).
  expect((await getUser(hp))?.id).toBe(user.id)
  expect(expectOk(await settle(latchCall<string | null>(hp.page, 'getAccessToken')))).toEqual(
    expect.any(String),
  )
})

test('error: the same link a second time signs nobody in and says it was used', async () => {
  const { page } = await forkThroughMetaMask(await signedVisitor())
  const first = await openInWallet(page)
  expect(await getUser(first)).not.toBeNull()
  const second = await openInWallet(page)
  expect(await getUser(second)).toBeNull()
  expect(await second.page.evaluate(() => (window as unknown as Recorded).warnings)).toEqual([
    'Session link refused: This session link has already been used',
  ])
  expect(await second.page.evaluate(() => location.href)).not.toContain(FORK_RETURN_PARAM)
})

test('error: the link after its life signs nobody in and says it expired', async () => {
  const { page, token } = await forkThroughMetaMask(await signedVisitor())
  // The token's row says it lives FORK_TTL_S; its end then moves into the past, as if the
  // visitor opened the link later (the server compares it with its own clock).
  const db = h().api.deps.db
  const row = await db
    .selectFrom('fork_tokens')
    .select(['hash', 'created_at', 'expires_at'])
    .orderBy('created_at', 'desc')
    .executeTakeFirstOrThrow()
  expect(token).not.toBe('')
  expect(row.expires_at.getTime() - row.created_at.getTime()).toBe(FORK_TTL_S * 1000)
  await db
    .updateTable('fork_tokens')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('hash', '=', row.hash)
    .execute()
  const late = await openInWallet(page)
  expect(await getUser(late)).toBeNull()
  expect(await late.page.evaluate(() => (window as unknown as Recorded).warnings)).toEqual([
    'Session link refused: This session link has expired',
  ])
})

test('error: closing the wallet apps screen rejects forkSession() with fork_exited', async () => {
  const { hp } = await signedVisitor()
  const pending = forkSession(hp.page)
  await visit(hp, 'SESSION_FORK_SCREEN')
  await hp.page.keyboard.press('Escape')
  const result = await withTimeout(pending, WAIT_MS, 'forkSession()')
  expect(result).toEqual({
    ok: false,
    code: 'fork_exited',
    message: 'User exited the modal before opening a wallet app',
  })
  // Nothing opened: the host page is the context's only page.
  expect(hp.context.pages()).toHaveLength(1)
})

test('refusal: the token in the address query is treated as leaked: not used, removed, a warning', async () => {
  const { page, token } = await forkThroughMetaMask(await signedVisitor())
  const inQuery = new URL(page.href)
  inQuery.hash = ''
  inQuery.searchParams.set(FORK_RETURN_PARAM, token)
  const leaked = await openInWallet(inQuery)
  expect(await getUser(leaked)).toBeNull()
  expect(await leaked.page.evaluate(() => location.href)).not.toContain(token)
  await expect
    .poll(() => leaked.page.evaluate(() => (window as unknown as Recorded).warnings), {
      timeout: WAIT_MS,
    })
    .toEqual(['Ignored a session link: its token was in the address query'])
  // Not spent: the fragment form still opens the session.
  const proper = await openInWallet(page)
  expect(await getUser(proper)).not.toBeNull()
})

test('behavior: with an automatic-recovery wallet, the forked page pairs with the code the original device’s wallet frame shows after a click there, then recovers without a passcode and signs', async () => {
  const { visitor, wallet } = await walletVisitor()
  const { page, token, walletNote } = await forkThroughMetaMask(visitor)
  expect(walletNote).toBe(true)
  // The click opened the app and recorded nothing: the link alone carries no wallet.
  expect(await pairingOf(token)).toBeNull()

  const elsewhere = await openInWallet(page)
  const user = await getUser(elsewhere)
  expect(user?.id).toBe(visitor.user.id)
  expect(user?.wallet?.address).toBe(wallet.address)
  const recovering = settle(
    walletCall<WalletAccount>(elsewhere.page, 'recoverWallet'),
    'recoverWallet()',
  )
  // The new device asks for the code, in its wallet frame's own input.
  await visit(elsewhere, SCREENS.recovery)
  await expect
    .poll(() => screen(elsewhere.modal, SCREENS.recovery).getByRole('heading').textContent(), {
      timeout: WAIT_MS,
    })
    .toBe('Pair this device')
  // The original device's wallet frame shows the code on the visitor's click in it.
  await clickApproval(visitor.hp, 'Show a pairing code')
  const code = await shownCode(visitor.hp)
  await walletFrameOf(elsewhere).getByTestId('wallet-approval-code').fill(code)
  await clickApproval(elsewhere, 'Pair this device')
  const recovered = expectOk(await recovering)
  expect(recovered.address).toBe(wallet.address)
  expect(await passcodeAsked(elsewhere.page)).toBe(false)
  expect(await pairingOf(token)).not.toBeNull()
  await dialogOpen(elsewhere.page, false)

  // And it signs there: the visitor's 'Sign and continue', a signature of the same wallet.
  const message = 'Continued in the wallet app'
  const pending = elsewhere.page.evaluate(
    (text) => (window.latch as LatchClient).signMessage(text),
    message,
  )
  await visit(elsewhere, SIGN)
  const sign = screen(elsewhere.modal, SIGN)
  await sign.getByRole('button', { name: 'Sign and continue' }).click()
  const signature = (await withTimeout(pending, WAIT_MS, 'signMessage()')) as Hex
  expect((await recoverMessageAddress({ message, signature })).toLowerCase()).toBe(
    wallet.address.toLowerCase(),
  )
  expect(await elsewhere.page.evaluate(() => (window as unknown as Recorded).warnings)).toEqual([])
  // The original device's wallet still signs too.
  await visitor.hp.modal.getByTestId('fork-pair-done').click({ timeout: WAIT_MS })
  await dialogOpen(visitor.hp.page, false)
})

test('refusal: a wrong pairing code is refused in the frame and pairs nothing; a link redeemed without the code never opens the wallet', async () => {
  const { visitor, wallet } = await walletVisitor()
  const { page, token } = await forkThroughMetaMask(visitor)
  const elsewhere = await openInWallet(page)
  const recovering = settle(
    walletCall<WalletAccount>(elsewhere.page, 'recoverWallet'),
    'recoverWallet()',
  )
  await visit(elsewhere, SCREENS.recovery)
  await clickApproval(visitor.hp, 'Show a pairing code')
  const code = await shownCode(visitor.hp)
  const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0')
  await walletFrameOf(elsewhere).getByTestId('wallet-approval-code').fill(wrong)
  await clickApproval(elsewhere, 'Pair this device')
  await expect
    .poll(() => walletFrameOf(elsewhere).getByTestId('wallet-approval-status').textContent(), {
      timeout: WAIT_MS,
    })
    .toBe('That code is not right, or it expired. Show a new one on your other device.')
  expect(await pairingOf(token)).toBeNull()
  // The visitor leaves: the recovery rejects, nothing of the wallet reached the page.
  await screen(elsewhere.modal, SCREENS.recovery).getByRole('heading').click()
  await elsewhere.page.keyboard.press('Escape')
  expect(expectRejected(await recovering).code).toBe('recovery_exited')
  expect((await getUser(visitor.hp))?.wallet?.address).toBe(wallet.address)
  await visitor.hp.modal.getByTestId('fork-pair-done').click({ timeout: WAIT_MS })
  await dialogOpen(visitor.hp.page, false)
})

test('attack: the host page redeems its forkSession() link from outside any browser before the wallet app does; the visitor’s click then hands it nothing: a signed-in session, no share, no new sign-in method', async () => {
  const { visitor, wallet, appId } = await walletVisitor()
  // The host page's own script calls forkSession(); the visitor clicks a wallet app once.
  const { token } = await forkThroughMetaMask(visitor)
  // The host's backend redeems the link first, and keeps the wallet credential it is set.
  const redeemed = await fetch(`${h().apiDirectUrl}${API_PREFIX}/sessions/fork/recover`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'latch-app-id': appId,
      'latch-client': 'latch-modal',
    },
    body: JSON.stringify({ refresh_token: token }),
    signal: AbortSignal.timeout(WAIT_MS),
  })
  expect(redeemed.status, await redeemed.clone().text()).toBe(200)
  const session = (await redeemed.json()) as RefreshResponse
  expect(session.user.id).toBe(visitor.user.id)
  const cookie = redeemed.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
  expect(cookie).toContain('__Host-latch-w-')
  // Everything it then sends looks like the wallet frame's own request.
  const asFrame = (path: string, body: unknown) =>
    fetch(`${h().apiDirectUrl}${API_PREFIX}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'latch-app-id': appId,
        'latch-client': 'latch-wallet-frame',
        authorization: `Bearer ${session.token}`,
        cookie,
        'sec-fetch-site': 'same-origin',
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(WAIT_MS),
    })
  for (const path of ['/wallets/recover', '/wallets/shares']) {
    const r = await asFrame(path, { address: wallet.address })
    const text = await r.text()
    expect(r.status, `${path}: ${text}`).toBe(403)
    expect(text).toContain('fork_wallet_not_confirmed')
    expect(text).not.toMatch(/authShare|ciphertext/)
  }
  // Guessing a pairing code gets a refusal; no new sign-in method gets past the change gate.
  const guess = await asFrame('/wallets/fork/pair/finish', { code: '123456' })
  expect([409, 422]).toContain(guess.status)
  const link = await asFrame('/siwe/link', {})
  expect(link.status).toBe(401)
  expect(await link.text()).toContain('link_sign_in_required')
  expect(await pairingOf(token)).toBeNull()
  // The visitor's own page still has its wallet, and still signs.
  await visitor.hp.modal.getByTestId('fork-pair-done').click({ timeout: WAIT_MS })
  const signed = await signThroughScreen(visitor.hp, 'still mine')
  expect(
    (await recoverMessageAddress({ message: 'still mine', signature: signed })).toLowerCase(),
  ).toBe(wallet.address.toLowerCase())
})
