/**
 * Recovery by passkey across the three origins of the same-site deployment (www., auth. and
 * api.example.test over HTTPS; RP IDs cannot be IP addresses, and the RP ID is example.test),
 * with Chromium's virtual authenticator (CDP WebAuthn: ctap2, internal, resident keys, user
 * verification, PRF). Sign in by e-mail code, create the wallet with a passkey on the passcode
 * screen, then on a "new device" with the synced passkey sign in, recover with the passkey (no
 * passcode) and sign. An authenticator without PRF is refused on screen, the passcode offered.
 * A wallet that exists gets passkey recovery when its user links a passkey (the offer after
 * link('passkey')), and a new device then recovers it with that passkey.
 */
import {
  API_PREFIX,
  embeddedWallet,
  type PasskeyAccount,
  type User,
  type WalletAccount,
} from '@latch/shared'
import { fromHex, openWithPasskey } from '@latch/wallet-frame'
import type { CDPSession } from 'playwright-core'
import { recoverMessageAddress } from 'viem'
import { expect, test } from 'vitest'
import { recoverWithPasskey as sealingsOf } from '../../server/src/wallets/passkeys.ts'
import { virtualAuthenticator } from './authenticator.ts'
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
import { type HostPage, WAIT_MS, waitReady } from './harness.ts'
import { useHarness } from './use-harness.ts'
import {
  createWithPasscode,
  expectInAppWallet,
  passcodeBoxes,
  SCREENS,
  signThroughScreen,
  walletApp,
  walletCall,
} from './wallet-flows.ts'

const h = useHarness({ sameSite: true })
const OFFER_SCREEN = 'PASSKEY_RECOVERY_SCREEN'
const NO_PRF = 'This passkey cannot protect your wallet. Use a passcode instead.'

/** The new device: the tab keeps its authenticator (a synced passkey), and loses the rest. */
async function newDevice(hp: HostPage, cdp: CDPSession) {
  await hp.context.clearCookies()
  for (const url of [h().hostUrl, h().modalUrl, h().apiUrl]) {
    await cdp.send('Storage.clearDataForOrigin', {
      origin: new URL(url).origin,
      storageTypes: 'all',
    })
  }
  await hp.page.reload({ waitUntil: 'load' })
  await waitReady(hp)
}

/** The credential ids the server holds a passkey sealing under, for the app's wallets. */
async function sealedUnder(appId: string): Promise<string[]> {
  const rows = await h()
    .api.deps.db.selectFrom('wallet_passkeys as p')
    .innerJoin('wallets as w', 'w.id', 'p.wallet_id')
    .select('p.credential_id')
    .where('w.app_id', '=', appId)
    .execute()
  return rows.map((r) => r.credential_id)
}

/** signMessage() through the sign screen; answers the signer. */
const signerOf = async (hp: HostPage, message: string) =>
  recoverMessageAddress({ message, signature: await signThroughScreen(hp, message) })

test('behavior: create with a passkey, then a new device with the synced passkey recovers without a passcode and signs', async () => {
  const app = await walletApp(h(), { requireUserPasswordOnCreate: true })
  const email = newEmail('passkey')
  const hp = await h().open({ appId: app.id })
  const { cdp } = await virtualAuthenticator(hp.page)
  await signInByEmail(h(), hp, email)
  const pending = walletCall<WalletAccount>(hp.page, 'createWallet')
  await visit(hp, SCREENS.create)
  await screen(hp.modal, SCREENS.create)
    .getByRole('button', { name: 'Use a passkey instead' })
    .click()
  const wallet = expectInAppWallet(expectOk(await settle(pending, 'createWallet()')), 'passkey')

  // The host page's script, same site and so the same RP ID: it may run its own ceremony with
  // the very passkey and a salt of its choosing, and its fetch carries the wallet cookie. Its
  // PRF output does not open the sealing (the salt is the frame's), and the route is closed to it.
  const token = expectOk(await settle(latchCall<string>(hp.page, 'getAccessToken')))
  const host = await hp.page.evaluate(async () => {
    const credential = (await navigator.credentials.get({
      publicKey: {
        rpId: 'example.test',
        challenge: crypto.getRandomValues(new Uint8Array(32)),
        userVerification: 'required',
        extensions: { prf: { eval: { first: new Uint8Array(32) } } },
      } as PublicKeyCredentialRequestOptions,
    })) as PublicKeyCredential
    const results = credential.getClientExtensionResults() as {
      prf?: { results?: { first?: ArrayBuffer } }
    }
    const first = results.prf?.results?.first
    return { credentialId: credential.id, prf: first ? Array.from(new Uint8Array(first)) : null }
  })
  const fetched = await walletApiFromPage(
    hp.page,
    `${h().apiUrl}${API_PREFIX}/wallets/passkey/recover`,
    { appId: app.id, token, address: wallet.address },
  )
  // CORS admits the modal origin only: the browser does not even send it (0), or the API refuses.
  expect([0, 403]).toContain(fetched.status)
  expect(fetched.body).not.toMatch(/ciphertext|salt|authShare/)
  expect(host.prf).toHaveLength(32)
  const row = await h()
    .api.deps.db.selectFrom('wallets')
    .select('user_id')
    .where('app_id', '=', app.id)
    .executeTakeFirstOrThrow()
  const answer = await sealingsOf(h().api.deps, app.id, row.user_id, wallet.address, h().apiUrl)
  const sealing = answer.passkeys.find((p) => p.credentialId === host.credentialId)
  const sealed = sealing ? { ciphertext: fromHex(sealing.ciphertext), userId: answer.userId } : null
  expect(sealed).not.toBeNull()
  await expect(
    openWithPasskey(new Uint8Array(host.prf ?? []), sealed?.ciphertext ?? new Uint8Array(), {
      userId: sealed?.userId ?? '',
      address: wallet.address,
      credentialId: host.credentialId,
    }),
  ).rejects.toMatchObject({ code: 'embedded_wallet_error' })

  // The new device. CDP's getCredentials/addCredential copy a credential without its PRF secret
  // (the virtual authenticator answers no PRF output for the copy), so the device keeps the tab,
  // whose authenticator holds the passkey as a synced one would, and loses everything else: the
  // cookies and the storage of the page's, the modal's and the API's origins.
  await newDevice(hp, cdp)
  await signInByEmail(h(), hp, email)
  const recovered = walletCall<WalletAccount>(hp.page, 'recoverWallet')
  await visit(hp, SCREENS.recovery)
  const recovery = screen(hp.modal, SCREENS.recovery)
  await expect.poll(() => passcodeBoxes(hp.modal).count()).toBe(0)
  await recovery.getByRole('button', { name: 'Use your passkey' }).click()
  expect(expectOk(await settle(recovered, 'recoverWallet()')).address).toBe(wallet.address)

  expect(await signerOf(hp, 'recovered with a passkey')).toBe(wallet.address)
  // The server holds the passkey's sealing, and nothing the modal could have sent it to open.
  expect(await sealedUnder(app.id)).toHaveLength(1)
})

test('behavior: a passcode wallet gets passkey recovery when its user links a passkey; a new device recovers it with the passkey, no passcode, and signs', async () => {
  const app = await h().createApp({
    loginMethods: ['email', 'passkey'],
    embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: true },
  })
  const email = newEmail('add-passkey')
  const hp = await h().open({ appId: app.id })
  const { cdp, present } = await virtualAuthenticator(hp.page)
  await signInByEmail(h(), hp, email)
  const wallet = await createWithPasscode(hp, 'k7m2q9')

  const linking = latchCall<User>(hp.page, 'link', 'passkey')
  await visit(hp, 'PASSKEY_SCREEN')
  const manage = screen(hp.modal, 'PASSKEY_SCREEN')
  await manage.getByRole('button', { name: 'Add a passkey' }).click()
  await expect
    .poll(() => manage.getByRole('status').textContent(), { timeout: WAIT_MS })
    .toBe('Passkey added')
  await manage.getByRole('button', { name: 'Done' }).click()
  await visit(hp, OFFER_SCREEN)
  const offer = screen(hp.modal, OFFER_SCREEN)
  await offer.getByRole('heading', { name: 'Recover your wallet with this passkey' }).waitFor()

  // The access token alone (the host page, its backend, a log) adds no sealing of its own, even
  // with forged fetch metadata: the wallet routes want the signed-in browser's credential.
  const token = expectOk(await settle(latchCall<string>(hp.page, 'getAccessToken')))
  const forged = await fetch(`${h().apiDirectUrl}${API_PREFIX}/wallets/passkey/add`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
      'latch-app-id': app.id,
      'latch-client': 'latch-modal',
      'sec-fetch-site': 'same-origin',
    },
    body: JSON.stringify({
      address: wallet.address,
      credentialId: 'attacker-passkey',
      salt: '00'.repeat(32),
      ciphertext: '00'.repeat(60),
    }),
  })
  expect([401, 403]).toContain(forged.status)

  await offer.getByRole('button', { name: 'Use this passkey for recovery' }).click()
  const user = expectOk(await settle(linking, "link('passkey')"))
  const passkeys = user.linkedAccounts.filter((a): a is PasskeyAccount => a.type === 'passkey')
  expect(passkeys).toHaveLength(1)
  // The wallet keeps its method; the server holds one sealing, under the linked passkey.
  expect(embeddedWallet(user.linkedAccounts)?.recoveryMethod).toBe('user-passcode')
  expect(await sealedUnder(app.id)).toEqual([passkeys[0]?.credentialId])

  await newDevice(hp, cdp)
  // The landing's passkey autofill would sign in with the passkey at once (an authenticator
  // that answers every request): this visitor signs in by e-mail, and picks nothing there.
  await present(false)
  await signInByEmail(h(), hp, email)
  await present(true)
  const recovered = walletCall<WalletAccount>(hp.page, 'recoverWallet')
  await visit(hp, SCREENS.recovery)
  await screen(hp.modal, SCREENS.recovery)
    .getByRole('button', { name: 'Use a passkey instead' })
    .click()
  expect(expectOk(await settle(recovered, 'recoverWallet()')).address).toBe(wallet.address)
  expect(await signerOf(hp, 'recovered with an added passkey')).toBe(wallet.address)
})

test('refusal: an authenticator without PRF — the create screen says so and keeps the passcode', async () => {
  const app = await walletApp(h(), { requireUserPasswordOnCreate: true })
  const hp = await h().open({ appId: app.id })
  await virtualAuthenticator(hp.page, { prf: false })
  await signInByEmail(h(), hp, newEmail('no-prf'))
  walletCall<WalletAccount>(hp.page, 'createWallet').catch(() => {})
  await visit(hp, SCREENS.create)
  const create = screen(hp.modal, SCREENS.create)
  await create.getByRole('button', { name: 'Use a passkey instead' }).click()
  await create.getByText(NO_PRF).waitFor({ state: 'visible', timeout: WAIT_MS })
  expect(await passcodeBoxes(hp.modal).count()).toBe(6)
  await expect
    .poll(() => create.getByRole('button', { name: 'Use a passkey instead' }).isEnabled())
    .toBe(true)
  await visit(hp, SCREENS.create)
  const rows = await h()
    .api.deps.db.selectFrom('wallets')
    .select('id')
    .where('app_id', '=', app.id)
    .execute()
  expect(rows).toEqual([])
})
