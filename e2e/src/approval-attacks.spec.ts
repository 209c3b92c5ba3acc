/**
 * Only the wallet origin approves (docs/architecture.md, "Approvals: only the frame's own click"),
 * tried as the attackers would in Chromium across the three origins: a script running on the
 * modal's origin (an XSS there, or a compromised wallet SDK the modal bundles) with no click from
 * the visitor, forking and asking the wallet frame to approve by message, or linking its own
 * Ethereum account; and what it then redeems from outside any browser. It gets a signed-in session
 * at most, never a share, and no sign-in method of its own; the visitor's own wallet still signs,
 * and a link the visitor approves in the wallet frame goes through (the controls).
 */
import { readFile } from 'node:fs/promises'
import {
  API_PREFIX,
  type RefreshResponse,
  type ServerAppConfig,
  type User,
  type WalletAccount,
} from '@latch/shared'
import type { Frame } from 'playwright-core'
import { recoverMessageAddress } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { beforeAll, expect, test } from 'vitest'
import { siweMessage } from '../../modal-app/src/connectors/siwe.ts'
import { expectModalAccessible } from './axe.ts'
import {
  enterCode,
  expectOk,
  latchCall,
  newEmail,
  newPhone,
  settle,
  signInByEmail,
  submitPhone,
  visit,
  waitSmsCode,
} from './flows.ts'
import { type HostPage, WAIT_MS, withTimeout } from './harness.ts'
import { useHarness } from './use-harness.ts'
import {
  clickApproval,
  SCREENS,
  signThroughScreen,
  walletCall,
  walletFrameOf,
} from './wallet-flows.ts'

const h = useHarness()
/** Penpal's browser build, which an attacker's script brings along. */
const PENPAL_IIFE = new URL('../../node_modules/penpal/dist/penpal.min.js', import.meta.url)

/** The modal's frame of a host page. */
function modalOf(hp: HostPage): Frame {
  const modal = hp.page.frames().find((f) => f.url().startsWith(h().modalUrl))
  if (!modal) throw new Error('no modal frame')
  return modal
}

/**
 * The visitor every attack here is tried on, and the control of each: signed in by e-mail code,
 * with an automatic-recovery wallet created by its click, on its own page. One for the file:
 * each test leaves the visitor as the next one expects (an attack refused changes nothing; the
 * phone is linked last), so the sign-in and the wallet creation are not repeated per test. Its
 * app allows wallet login (the SIWE routes), e-mail and SMS (the phone linked).
 */
let visitor: {
  app: ServerAppConfig
  hp: HostPage
  user: User
  wallet: WalletAccount
}

beforeAll(async () => {
  const app = await h().createApp({
    loginMethods: ['wallet', 'email', 'sms'],
    appearance: { showWalletLoginFirst: false },
    embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: false },
  })
  // Kept across the tests; it closes with the file's harness.
  const hp = await h().open({ appId: app.id, kept: true })
  const { user } = await signInByEmail(h(), hp, newEmail('approval-attack'))
  const created = walletCall<WalletAccount>(hp.page, 'createWallet')
  await visit(hp, SCREENS.created)
  const wallet = expectOk(await settle(created, 'createWallet()'))
  visitor = { app, hp, user, wallet }
})

/**
 * A fork of the visitor's session made while the fork screen is open, read off the wire, and the
 * visitor leaving without a click: what a script of the modal's origin holds once it forked (it
 * runs with the modal's session, so it can make the modal's own fork request).
 */
async function forkWithoutClick(hp: HostPage): Promise<string> {
  const answer = hp.page.waitForResponse(
    (r) => r.request().method() === 'POST' && new URL(r.url()).pathname.endsWith('/sessions/fork'),
    { timeout: WAIT_MS },
  )
  const pending = hp.page.evaluate(() =>
    (window.latch as unknown as { forkSession(): Promise<string> }).forkSession().catch(() => null),
  )
  await visit(hp, 'SESSION_FORK_SCREEN')
  const token = ((await (await answer).json()) as { new_session_refresh_token: string })
    .new_session_refresh_token
  await hp.page.keyboard.press('Escape')
  await withTimeout(pending, WAIT_MS, 'forkSession()')
  return token
}

/** Redeems a fork token from this process, as a host backend or an attacker's server would. */
async function redeemFromOutside(appId: string, token: string) {
  const res = await fetch(`${h().apiDirectUrl}${API_PREFIX}/sessions/fork/recover`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'latch-app-id': appId,
      'latch-client': 'latch-modal',
    },
    body: JSON.stringify({ refresh_token: token }),
    signal: AbortSignal.timeout(WAIT_MS),
  })
  expect(res.status, await res.clone().text()).toBe(200)
  const session = (await res.json()) as RefreshResponse
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
  // Every later request carries the credential it was set and forged wallet-frame metadata.
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
  return { session, cookie, asFrame }
}

test('attack: a script on the modal origin forks the session, opens its own wallet frame and asks it over penpal to confirm the fork and to approve a pairing, with no click: refused; the fork redeemed from outside any browser gets no share', async () => {
  const { app, hp, user, wallet } = visitor
  const accessToken = expectOk(await settle(latchCall<string>(hp.page, 'getAccessToken')))
  const forkToken = await forkWithoutClick(hp)

  // The script brings penpal (any script can), frames the wallet frame on the modal's origin,
  // which the frame answers, and asks.
  const modal = modalOf(hp)
  const penpal = await readFile(PENPAL_IIFE, 'utf8')
  await modal.evaluate(`${penpal}\n;window.__attackerPenpal = Penpal;`)
  const frameUrl = `${h().apiUrl}/apps/${encodeURIComponent(app.id)}/embedded-wallets`
  const asked = await modal.evaluate(
    async ([src, token, fork]) => {
      type Remote = Record<string, (arg?: unknown) => Promise<unknown>>
      const Penpal = (window as unknown as { __attackerPenpal: Record<string, never> })
        .__attackerPenpal as unknown as {
        connect(o: unknown): { promise: Promise<Remote> }
        WindowMessenger: new (o: unknown) => unknown
      }
      const iframe = document.createElement('iframe')
      iframe.src = src
      iframe.style.cssText = 'position:absolute;width:0;height:0;border:0'
      document.body.append(iframe)
      await new Promise((r) => iframe.addEventListener('load', r, { once: true }))
      const remote = await Penpal.connect({
        messenger: new Penpal.WindowMessenger({
          remoteWindow: iframe.contentWindow,
          allowedOrigins: [new URL(src).origin],
        }),
        methods: {},
        timeout: 10_000,
      }).promise
      const outcome = (p: Promise<unknown>) =>
        p.then(
          (v) => ({ ok: JSON.stringify(v) }),
          (e: unknown) => ({ error: JSON.stringify(e) }),
        )
      const confirm = await outcome(
        remote['latch:wallet:confirm-fork']?.({ accessToken: token, forkToken: fork }) ??
          Promise.reject(new Error('no such method')),
      )
      // It may ask the frame to SHOW the pairing button; nobody clicks it.
      const approval = outcome(
        remote['latch:wallet:approval']?.({ accessToken: token, kind: 'fork-show-code' }) ??
          Promise.reject(new Error('no such method')),
      )
      const settledApproval = await Promise.race([
        approval,
        new Promise((r) => setTimeout(() => r('pending'), 2_000)),
      ])
      iframe.remove()
      return { confirm, approval: settledApproval }
    },
    [frameUrl, accessToken, forkToken] as const,
  )
  expect(asked.confirm).toMatchObject({ error: expect.stringContaining('origin_not_allowed') })
  expect(asked.approval).toBe('pending')

  // The script's server redeems the fork: signed in as the visitor, but no share.
  const { session, asFrame } = await redeemFromOutside(app.id, forkToken)
  expect(session.user.id).toBe(user.id)
  for (const path of ['/wallets/recover', '/wallets/shares']) {
    const r = await asFrame(path, { address: wallet.address })
    const text = await r.text()
    expect(r.status, `${path}: ${text}`).toBe(403)
    expect(text).not.toMatch(/authShare|ciphertext/)
  }
  const pairing = await h()
    .api.deps.db.selectFrom('wallet_pairings')
    .select('id')
    .where('app_id', '=', app.id)
    .execute()
  expect(pairing).toEqual([])

  // The control: the visitor's own wallet still signs.
  const signature = await signThroughScreen(hp, 'still mine')
  expect((await recoverMessageAddress({ message: 'still mine', signature })).toLowerCase()).toBe(
    wallet.address.toLowerCase(),
  )
})

test('attack: a script on the modal origin links its own Ethereum account to the visitor through the modal’s credentialed fetch (the credential rides along): refused without the wallet frame’s approval; the visitor’s accounts stay as they were', async () => {
  const { app, hp, user } = visitor
  const accessToken = expectOk(await settle(latchCall<string>(hp.page, 'getAccessToken')))
  const attacker = privateKeyToAccount(generatePrivateKey())
  const modal = modalOf(hp)
  // The script's requests: the modal's own credentialed fetch of the API.
  const fromModal = (path: string, body: unknown) =>
    modal.evaluate(
      async ([url, app, token, payload]) => {
        const res = await fetch(url, {
          method: 'POST',
          credentials: 'include',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${token}`,
            'latch-app-id': app,
            'latch-client': 'latch-modal',
          },
          body: payload,
        })
        return { status: res.status, body: await res.text() }
      },
      [`${h().apiUrl}${API_PREFIX}${path}`, app.id, accessToken, JSON.stringify(body)] as const,
    )
  const init = await fromModal('/siwe/init', { address: attacker.address })
  expect(init.status, init.body).toBe(200)
  const { nonce } = JSON.parse(init.body) as { nonce: string }
  const message = siweMessage({
    pageUrl: h().hostUrl,
    address: attacker.address,
    chainId: 1,
    nonce,
    now: new Date(),
  })
  const signature = await attacker.signMessage({ message })
  const link = await fromModal('/siwe/link', {
    message,
    signature,
    chainId: '1',
    walletClientType: 'metamask',
    connectorType: 'injected',
  })
  expect(link.status, link.body).toBe(403)
  expect(JSON.parse(link.body)).toMatchObject({ error: { code: 'link_not_approved' } })
  const after = expectOk(await settle(latchCall<User>(hp.page, 'getUser')))
  expect(
    after.linkedAccounts.some(
      (a) => a.type === 'wallet' && a.address.toLowerCase() === attacker.address.toLowerCase(),
    ),
  ).toBe(false)
  expect(after.id).toBe(user.id)
})

test('behavior: linking a phone to a user with an automatic wallet waits for the visitor’s click on “Allow” in the wallet frame, then links', async () => {
  const { hp, user } = visitor
  const phone = newPhone()
  const linking = latchCall<User>(hp.page, 'link', 'phone')
  await visit(hp, 'LINK_PHONE_SCREEN')
  await submitPhone(hp.modal, phone.typed)
  const code = await waitSmsCode(h(), phone.e164)
  await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
  await enterCode(hp.modal, code)
  // The frame asks, in its own words, naming the number; nothing links before the click.
  const approval = walletFrameOf(hp).getByTestId('wallet-approval')
  await approval.waitFor({ state: 'visible', timeout: WAIT_MS })
  expect(await approval.textContent()).toMatch(
    /^Let \+[\d ]+ sign in to your account and open your wallet\?Allow/,
  )
  await expectModalAccessible(hp.page, 'the link approval')
  const before = expectOk(await settle(latchCall<User>(hp.page, 'getUser')))
  expect(before.phone).toBeUndefined()
  await clickApproval(hp, 'Allow')
  const linked = expectOk(await settle(linking, "link('phone')"))
  expect(linked.id).toBe(user.id)
  expect(linked.phone?.number).toBe(phone.e164)
})
