/**
 * The wallet API from the attacker's seat, in Chromium across the three origins: every request
 * the wallet frame sent while creating and recovering a wallet, recorded and replayed from this
 * process with the host page's access token (what the host page, its scripts, its backend and
 * its logs hold); the same from the host page's and the modal's own credentialed fetches. None
 * gets a share, a ciphertext or a key; the wallet frame itself still signs (the control).
 */
import { API_PREFIX, type Hex, type WalletAccount } from '@latch/shared'
import type { BrowserContext, Frame } from 'playwright-core'
import { recoverMessageAddress } from 'viem'
import { expect, test } from 'vitest'
import {
  expectOk,
  latchCall,
  newEmail,
  screen,
  settle,
  signInByEmail,
  visit,
  walletApiFromPage,
} from './flows.ts'
import { useHarness } from './use-harness.ts'
import { expectInAppWallet, SCREENS, walletApp, walletCall } from './wallet-flows.ts'

const h = useHarness()

interface Recorded {
  method: string
  url: string
  headers: Record<string, string>
  body: string | null
}

const isWalletFrame = (url: string) => /\/apps\/[^/]+\/embedded-wallets/.test(url)

/** For open()'s `prepare`: records every wallet API request the wallet frame makes. */
const recordFrameRequests = (into: Recorded[]) => async (context: BrowserContext) => {
  context.on('request', (request) => {
    let frameUrl = ''
    try {
      frameUrl = request.frame().url()
    } catch {
      return
    }
    if (!isWalletFrame(frameUrl) || !request.url().includes(`${API_PREFIX}/wallets`)) return
    void request.allHeaders().then((headers) =>
      into.push({
        method: request.method(),
        url: request.url(),
        headers,
        body: request.postData(),
      }),
    )
  })
}

/** What an answer must never hold: a share, a recovery ciphertext or key (hex of 32+ bytes). */
const keyMaterial = /authShare|ciphertext|"key"|[0-9a-f]{64}/i

test('security: the frame’s create and recovery requests replayed with the host’s token, and the host page’s and the modal’s own credentialed fetches, get nothing; the frame still signs', async () => {
  const app = await walletApp(h(), { requireUserPasswordOnCreate: false })
  const email = newEmail('attacker')
  const recorded: Recorded[] = []
  const first = await h().open({ appId: app.id, prepare: recordFrameRequests(recorded) })
  await signInByEmail(h(), first, email)
  const created = walletCall<WalletAccount>(first.page, 'createWallet')
  await visit(first, SCREENS.created)
  const wallet = expectInAppWallet(expectOk(await settle(created, 'createWallet()')), 'latch')

  // A new device: signs in, recovers automatically.
  const device = await h().open({ appId: app.id, prepare: recordFrameRequests(recorded) })
  await signInByEmail(h(), device, email)
  expect(
    expectOk(await settle(walletCall<WalletAccount>(device.page, 'recoverWallet'))).address,
  ).toBe(wallet.address)
  const token = expectOk(await settle(latchCall<string>(device.page, 'getAccessToken')))
  const paths = new Set(recorded.map((r) => new URL(r.url).pathname))
  for (const path of ['challenge', '', 'info', 'recover']) {
    expect(paths, path).toContain(`${API_PREFIX}/wallets${path ? `/${path}` : ''}`)
  }
  // The recording did carry the credential: that is what the replays lack.
  expect(recorded.every((r) => /__Host-latch-w-/.test(r.headers.cookie ?? ''))).toBe(true)

  // 1. Replayed from this process with the host's token: as recorded but for the cookie (the
  // recorded fetch metadata and Origin forged as they were), and with no browser headers.
  const replays: string[] = []
  for (const r of recorded) {
    const { cookie: _cookie, ...forged } = r.headers
    const bare = {
      'content-type': 'application/json',
      'latch-app-id': r.headers['latch-app-id'] ?? app.id,
      'latch-client': r.headers['latch-client'] ?? 'latch-wallet-frame',
    }
    for (const headers of [forged, bare]) {
      const res = await fetch(new URL(new URL(r.url).pathname, h().apiDirectUrl), {
        method: r.method,
        headers: { ...headers, authorization: `Bearer ${token}` },
        body: r.body,
        signal: AbortSignal.timeout(10_000),
      })
      const body = await res.text()
      replays.push(`${r.method} ${new URL(r.url).pathname} ${res.status}`)
      expect([401, 403], `${r.url}: ${res.status} ${body}`).toContain(res.status)
      expect(body).not.toMatch(keyMaterial)
    }
  }
  expect(replays.length).toBeGreaterThanOrEqual(8)

  // 2. The host page's own fetch, credentials included: the browser refuses it (CORS) or the
  // API does (not same-origin); either way nothing comes back.
  const fromPage = (target: Frame) =>
    walletApiFromPage(target, `${h().apiUrl}${API_PREFIX}/wallets/recover`, {
      appId: app.id,
      token,
      address: wallet.address,
    })
  const host = await fromPage(device.page.mainFrame())
  expect(host.body).not.toMatch(keyMaterial)
  expect([0, 401, 403]).toContain(host.status)
  // 3. The modal's own fetch: CORS admits the modal, and the cookie even comes along, yet the
  // API refuses a request that is not the wallet origin's own.
  const modal = device.page.frames().find((f) => f.url().startsWith(h().modalUrl))
  if (!modal) throw new Error('no modal frame')
  const fromModal = await fromPage(modal)
  expect(fromModal.status).toBe(403)
  expect(fromModal.body).toContain('Only the wallet frame may call the wallet API')

  // The control: the wallet frame still signs for the visitor in this browser.
  const signed = settle(
    device.page.evaluate(async () => {
      const latch = window.latch as unknown as { signMessage(m: string): Promise<Hex> }
      return { ok: true as const, value: await latch.signMessage('still mine') }
    }),
    'signMessage()',
  )
  await visit(device, 'EMBEDDED_WALLET_SIGN_REQUEST_SCREEN')
  // The button arms once the request has been on screen a moment; a click waits for it.
  const sign = screen(device.modal, 'EMBEDDED_WALLET_SIGN_REQUEST_SCREEN')
  await sign.getByRole('button', { name: 'Sign and continue' }).click()
  const signature = expectOk(await signed)
  expect(await recoverMessageAddress({ message: 'still mine', signature })).toBe(wallet.address)
})
