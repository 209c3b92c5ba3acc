/**
 * The recommended deployment: host page, modal and API on subdomains of one site over HTTPS
 * (www., auth. and api.example.test). The wallet frame is same-site with the page, the browser
 * lets it keep the device share, and a reload finds the wallet usable with no recovery at all.
 */
import type { WalletAccount } from '@latch/shared'
import { expect, test } from 'vitest'
import { expectOk, newEmail, settle, signInByEmail } from './flows.ts'
import { waitReady } from './harness.ts'
import { useHarness } from './use-harness.ts'
import {
  createWithPasscode,
  keyMaterial,
  leaks,
  recordScreens,
  recordTraffic,
  SCREENS,
  screensSeen,
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
