/**
 * The proof that no key material leaves the wallet origin: every message the host page and the
 * modal receive, and every request and answer of theirs, recorded in Chromium across three
 * origins during a creation and a new-device recovery, hold neither the private key nor any
 * share of it, in hex or base64. The key and its shares come through routes only a test has
 * (the server's store, the frame's own code run here). And the search itself can fail.
 */
import type { WalletAccount } from '@latch/shared'
import { expect, test } from 'vitest'
import { signIn } from '../../server/src/sessions/service.ts'
import { fetchApi, walletCore } from '../../wallet-frame/src/index.ts'
import { expectOk, newEmail, settle, signInByEmail } from './flows.ts'
import { useHarness } from './use-harness.ts'
import {
  createWallet,
  createWithPasscode,
  frameFetchFrom,
  type KeyMaterial,
  keyMaterial,
  leaks,
  passcodeAsked,
  recordScreens,
  recordTraffic,
  recoverWithPasscode,
  SCREENS,
  screensSeen,
  type Traffic,
  walletApp,
  walletCall,
} from './wallet-flows.ts'

const h = useHarness()

/** Records a context's traffic into `into` (open()'s prepare). */
const recorder = (into: Traffic[]) => (context: Parameters<typeof recordTraffic>[0]) =>
  recordTraffic(context, h().apiUrl).then((t) => {
    into.push(t)
  })

/** The key and every share searched for in all `traffic`, with the controls that it is live. */
async function expectNoLeak(traffic: Traffic[], material: KeyMaterial, address: string) {
  const corpus = (await Promise.all(traffic.map((t) => t.corpus()))).join('\n')
  // The recording is live: the wallet frame's answers to the modal (the address) are in it,
  // and the wallet frame's own API answers do carry a share, which the search finds.
  expect(corpus.toLowerCase()).toContain(address.toLowerCase().slice(2))
  expect(traffic.every((t) => t.messages.length > 0)).toBe(true)
  expect(leaks(material, traffic.flatMap((t) => t.walletHttp).join('\n'))).not.toEqual([])
  expect(leaks(material, corpus)).toEqual([])
}

test('security: passcode wallet — no key material reaches the host page or the modal, in any message they receive or any request or answer of theirs, through creation and new-device recovery', async () => {
  const app = await walletApp(h(), { requireUserPasswordOnCreate: true })
  const email = newEmail('no-leak')
  const passcode = 'S3cr3t'
  const traffic: Traffic[] = []
  const first = await h().open({ appId: app.id, prepare: recorder(traffic) })
  await signInByEmail(h(), first, email)
  const wallet = await createWithPasscode(first, passcode)
  const device = await h().open({ appId: app.id, prepare: recorder(traffic) })
  await signInByEmail(h(), device, email)
  expect((await recoverWithPasscode(device, passcode)).address).toBe(wallet.address)
  const token = expectOk(await settle(walletCall<string>(device.page, 'getAccessToken')))
  const material = await keyMaterial(h(), app.id, wallet.address, token, passcode)
  await expectNoLeak(traffic, material, wallet.address)
})

test('security: automatic wallet — the same through creation and automatic recovery on a new device, which shows no prompt (the server releases the recovery key to the frame only)', async () => {
  const app = await walletApp(h(), { requireUserPasswordOnCreate: false })
  const email = newEmail('no-leak-auto')
  const traffic: Traffic[] = []
  const first = await h().open({ appId: app.id, prepare: recorder(traffic) })
  await signInByEmail(h(), first, email)
  const wallet = await createWallet(first)
  const device = await h().open({
    appId: app.id,
    prepare: async (context) => {
      await recordScreens(context)
      await recorder(traffic)(context)
    },
  })
  await signInByEmail(h(), device, email)
  const recovered = expectOk(
    await settle(walletCall<WalletAccount>(device.page, 'recoverWallet'), 'recoverWallet()'),
  )
  expect(recovered.address).toBe(wallet.address)
  // No prompt: neither the recovery screen nor a passcode box ever showed on the new device.
  expect(await screensSeen(device.page)).not.toContain(SCREENS.recovery)
  expect(await passcodeAsked(device.page)).toBe(false)
  const token = expectOk(await settle(walletCall<string>(device.page, 'getAccessToken')))
  const material = await keyMaterial(h(), app.id, wallet.address, token)
  await expectNoLeak(traffic, material, wallet.address)
})

test('behavior: the leak search can fail — it finds the device share (never given to it) and the key in any case or base64', async () => {
  // A wallet made by the frame's own code in this process, so its device share is known here,
  // for a user signed in through the server's own sign-in (no browser is needed).
  const { response } = await signIn(h().api.deps, h().app.id, {
    type: 'email',
    address: newEmail('leak-search'),
  })
  const token = response.token
  const shares = new Map<string, Uint8Array>()
  const core = walletCore({
    api: fetchApi(h().apiDirectUrl, h().app.id, frameFetchFrom(h(), h().app.id, token)),
    store: {
      persistent: false,
      get: (a) => shares.get(a.toLowerCase()),
      set: (a, share) => shares.set(a.toLowerCase(), share),
    },
  })
  const { address } = await core.create({ accessToken: token, recoveryPin: 'F1nd3r' })
  const device = shares.get(address.toLowerCase())
  if (!device) throw new Error('the frame code kept no device share')
  const material = await keyMaterial(h(), h().app.id, address, token, 'F1nd3r')
  expect(leaks(material, `{"x":"${Buffer.from(device).toString('base64')}"}`)).not.toEqual([])
  expect(leaks(material, `0x${Buffer.from(device).toString('hex').toUpperCase()}`)).not.toEqual([])
  expect(leaks(material, Buffer.from(material.privateKey).toString('hex'))).not.toEqual([])
  expect(leaks(material, `${address} ${token}`)).toEqual([])
})
