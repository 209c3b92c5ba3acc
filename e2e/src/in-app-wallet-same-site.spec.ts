/**
 * The recommended deployment: host page, modal and API on subdomains of one site over HTTPS
 * (www., auth. and api.example.test). The wallet frame is same-site with the page, the browser
 * lets it keep the device share, and a reload finds the wallet usable with no recovery at all.
 */
import { API_PREFIX, type Hex, type WalletAccount } from '@latch/shared'
import { recoverMessageAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { expect, test } from 'vitest'
import {
  expectOk,
  latchCall,
  newEmail,
  settle,
  signInByEmail,
  visit,
  walletApiFromPage,
} from './flows.ts'
import { WAIT_MS, waitReady } from './harness.ts'
import { useHarness } from './use-harness.ts'
import {
  createWallet,
  createWithPasscode,
  keyMaterial,
  leaks,
  recordScreens,
  recordTraffic,
  SCREENS,
  screensSeen,
  signThroughScreen,
  type Traffic,
  walletApp,
  walletCall,
} from './wallet-flows.ts'

const h = useHarness({ sameSite: true })

test('behavior: same-site — the page, the modal and the API are subdomains of one site over HTTPS', async () => {
  expect(new URL(h().hostUrl).hostname).toBe('www.example.test')
  expect(new URL(h().modalUrl).hostname).toBe('auth.example.test')
  expect(new URL(h().apiUrl).hostname).toBe('api.example.test')
  for (const url of [h().hostUrl, h().modalUrl, h().apiUrl]) {
    expect(new URL(url).protocol).toBe('https:')
  }
})

test('behavior: same-site — a passcode wallet survives a reload with no recovery; no key material reaches the page or the modal', async () => {
  const app = await walletApp(h(), { requireUserPasswordOnCreate: true })
  let traffic: Traffic | undefined
  const hp = await h().open({
    appId: app.id,
    prepare: async (context) => {
      await recordScreens(context)
      traffic = await recordTraffic(context, h().apiUrl)
    },
  })
  await signInByEmail(h(), hp, newEmail('same-site'))
  const wallet = await createWithPasscode(hp, 'S4m3S1')

  await hp.page.reload({ waitUntil: 'load' })
  await waitReady(hp)
  const usable = expectOk(
    await settle(walletCall<WalletAccount>(hp.page, 'recoverWallet'), 'recoverWallet()'),
  )
  expect(usable.address).toBe(wallet.address)
  const seen = await screensSeen(hp.page)
  expect(seen).not.toContain(SCREENS.recovery)
  // The passcode was never asked again: the server counted no evaluation since the creation.
  const row = await h()
    .api.deps.db.selectFrom('wallets')
    .select(['failed_attempts', 'evaluated_at'])
    .where('app_id', '=', app.id)
    .executeTakeFirstOrThrow()
  expect(row).toEqual({ failed_attempts: 0, evaluated_at: null })

  const token = expectOk(await settle(walletCall<string>(hp.page, 'getAccessToken')))
  const material = await keyMaterial(h(), app.id, wallet.address, token, 'S4m3S1')
  if (!traffic) throw new Error('no traffic recorded')
  const corpus = await traffic.corpus()
  expect(corpus.toLowerCase()).toContain(wallet.address.toLowerCase().slice(2))
  expect(leaks(material, traffic.walletHttp.join('\n'))).not.toEqual([])
  expect(leaks(material, corpus)).toEqual([])
})

test('behavior: same-site — with the wallet credential as a first-party cookie: an automatic wallet is created, signs, exports after the Reveal click, and a new device recovers it and signs; the host page’s own credentialed fetch of the wallet API is refused', async () => {
  const app = await walletApp(h(), { requireUserPasswordOnCreate: false })
  const email = newEmail('same-site-auto')
  const hp = await h().open({ appId: app.id })
  await signInByEmail(h(), hp, email)
  const wallet = await createWallet(hp)

  const signature = await signThroughScreen(hp, 'same-site first device')
  expect(await recoverMessageAddress({ message: 'same-site first device', signature })).toBe(
    wallet.address,
  )
  await hp.page.waitForFunction(
    () => document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === false,
    undefined,
    { timeout: WAIT_MS },
  )

  // Export: the key shows only after the click inside the export page, and is the wallet's.
  const exported = latchCall<void>(hp.page, 'exportWallet' as never)
  await visit(hp, 'EMBEDDED_WALLET_KEY_EXPORT_SCREEN')
  const handle = await hp.modal.getByTestId('latch-export-frame').elementHandle()
  const frame = await handle?.contentFrame()
  if (!frame) throw new Error('the export frame is not in the modal')
  await frame.getByRole('button', { name: 'Reveal private key' }).click({ timeout: 15_000 })
  const box = frame.getByTestId('export-key')
  await box.waitFor({ state: 'visible' })
  const key = (await box.textContent()) ?? ''
  expect(privateKeyToAccount(key as Hex).address).toBe(wallet.address)
  const done = hp.modal.getByRole('button', { name: 'Done' })
  await expect.poll(() => done.isEnabled(), { timeout: 5000 }).toBe(true)
  await done.click()
  expect((await settle(exported, 'exportWallet()')).ok).toBe(true)

  // The host page (same site, so its fetch even carries the cookie) is still refused.
  const token = expectOk(await settle(latchCall<string>(hp.page, 'getAccessToken')))
  const fromHost = await walletApiFromPage(hp.page, `${h().apiUrl}${API_PREFIX}/wallets/recover`, {
    appId: app.id,
    token,
    address: wallet.address,
  })
  expect(fromHost.body).not.toMatch(/authShare|ciphertext/)

  // A new device: signs in, recovers without a prompt, signs.
  const device = await h().open({ appId: app.id })
  await signInByEmail(h(), device, email)
  const again = await signThroughScreen(device, 'same-site second device')
  expect(
    await recoverMessageAddress({
      message: 'same-site second device',
      signature: again,
    }),
  ).toBe(wallet.address)
})
