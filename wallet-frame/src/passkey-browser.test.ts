// @vitest-environment node
/**
 * Recovery by passkey in Chromium, with its virtual authenticator (CDP WebAuthn, ctap2, internal,
 * resident keys, user verification, PRF), in the same-site deployment (RP IDs cannot be IP
 * addresses: `modal.` and `api.example.test`, RP ID `example.test`). The stand-in modal drives
 * the built frame over penpal: create with passkey recovery; the same tab with its cookies and
 * storage gone (a new device with the synced passkey) recovers and signs; an authenticator without PRF is
 * refused with the error the modal turns into the passcode offer. The modal only ever hears
 * addresses and errors.
 */
import type { BrowserContext, CDPSession, Page } from 'playwright-core'
import { recoverMessageAddress } from 'viem'
import { afterAll, beforeAll, expect, test, vi } from 'vitest'
import { virtualAuthenticator } from '../../e2e/src/authenticator.ts'
import { recoverWithPasskey } from '../../server/src/wallets/passkeys.ts'
import { startWalletHarness, type WalletHarness } from './test/harness.ts'

vi.setConfig({ testTimeout: 90_000, hookTimeout: 180_000 })

let h: WalletHarness
beforeAll(async () => {
  h = await startWalletHarness({ sameSite: true })
})
afterAll(async () => {
  await h?.close()
})

interface Device {
  context: BrowserContext
  page: Page
  cdp: CDPSession
  authenticatorId: string
}

async function device(prf = true): Promise<Device> {
  const context = await h.browser.newContext()
  const page = await context.newPage()
  const { cdp, authenticatorId } = await virtualAuthenticator(page, { prf })
  await h.open(page)
  await page.waitForFunction(() => 'call' in window, undefined, { timeout: 10_000 })
  return { context, page, cdp, authenticatorId }
}

/**
 * What the modal does on its click (Chromium refuses `create` to the cross-origin frame without
 * a click of its own): registers a passkey under the frame's RP ID with the PRF extension
 * enabled but no input, so no PRF output ever reaches the modal, and hands the id to the frame.
 */
async function registerInModal(page: Page, token: string): Promise<string> {
  const options = await h.call(page, 'latch:wallet:passkey-options', { accessToken: token })
  const { rpId, rpName } = options.ok as unknown as { rpId: string; rpName: string }
  expect(rpId).toBe('example.test')
  const made = await page.evaluate(
    async ([id, name]) => {
      const credential = (await navigator.credentials.create({
        publicKey: {
          rp: { id, name },
          user: { id: crypto.getRandomValues(new Uint8Array(16)), name: 'w', displayName: 'w' },
          challenge: crypto.getRandomValues(new Uint8Array(32)),
          pubKeyCredParams: [
            { type: 'public-key', alg: -7 },
            { type: 'public-key', alg: -257 },
          ],
          authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
          extensions: { prf: {} } as AuthenticationExtensionsClientInputs,
        },
      })) as PublicKeyCredential
      return { id: credential.id, prf: JSON.stringify(credential.getClientExtensionResults()) }
    },
    [rpId, rpName] as const,
  )
  // Enabled, and no output: the modal never holds one.
  expect(made.prf).not.toContain('results')
  return made.id
}

test('behavior: create with passkey recovery; a new device with the synced passkey recovers without a passcode and signs; the modal hears addresses only', async () => {
  const email = `passkey.${Date.now()}@example.com`
  const phone = await device()
  const auth = await h.signIn(phone.page, email)
  // The frame cannot register a passkey itself without a click of its own in Chromium.
  const alone = await h.call(phone.page, 'latch:wallet:create', {
    accessToken: auth.token,
    recoveryMethod: 'passkey',
  })
  expect(alone.error?.code).toBe('passkey_failed')
  const credentialId = await registerInModal(phone.page, auth.token)
  const created = await h.call(phone.page, 'latch:wallet:create', {
    accessToken: auth.token,
    recoveryMethod: 'passkey',
    credentialId,
  })
  expect(created.error).toBeUndefined()
  const address = created.ok?.address as string
  expect(created.ok).toEqual({ address })
  const { credentials } = await phone.cdp.send('WebAuthn.getCredentials', {
    authenticatorId: phone.authenticatorId,
  })
  expect(credentials).toHaveLength(1)
  expect(credentials[0]?.rpId).toBe('example.test')
  expect(credentials[0]?.credentialId.replace(/=+$/, '')).toBe(
    Buffer.from(credentialId, 'base64url').toString('base64').replace(/=+$/, ''),
  )

  // A new device with the same (synced) passkey. CDP's getCredentials/addCredential copy a
  // credential without its PRF secret (Chromium's virtual authenticator then answers no PRF
  // output for the copy), so the "new device" keeps the tab, whose authenticator holds the
  // passkey, and loses everything else: cookies, the wallet origin's storage, the session.
  await phone.context.clearCookies()
  await phone.cdp.send('Storage.clearDataForOrigin', {
    origin: h.apiOrigin,
    storageTypes: 'all',
  })
  await h.open(phone.page)
  await phone.page.waitForFunction(() => 'call' in window, undefined, { timeout: 10_000 })
  const laptop = phone
  const again = await h.signIn(laptop.page, email)
  const missing = await h.call(laptop.page, 'latch:wallet:connect', {
    address,
    accessToken: again.token,
  })
  expect(missing.error?.code).toBe('wallet_not_on_device')
  const recovered = await h.call(laptop.page, 'latch:wallet:recover', {
    address,
    accessToken: again.token,
  })
  expect(recovered).toEqual({ ok: { address } })
  const message = 'Recovered with a passkey'
  const signed = await h.call(laptop.page, 'latch:wallet:rpc', {
    address,
    accessToken: again.token,
    request: { method: 'personal_sign', params: [message, address] },
  })
  const signature = (signed.ok as { response?: string } | undefined)?.response as `0x${string}`
  expect(await recoverMessageAddress({ message, signature })).toBe(address)

  // What the server holds for the passkey never reached either modal page.
  const sealed = {
    body: await recoverWithPasskey(
      h.latch.deps,
      h.appId,
      again.user.id,
      address,
      `${h.apiOrigin}/api/v1/wallets/passkey/recover`,
    ),
  }
  const sealing = sealed.body.passkeys[0]
  expect(sealing?.ciphertext).toMatch(/^[0-9a-f]{122}$/)
  for (const page of [laptop.page]) {
    const received = await page.evaluate(
      () => (window as unknown as { received: string[] }).received,
    )
    const all = received.join('\n').toLowerCase()
    for (const secret of [sealed.body.authShare, sealing?.ciphertext ?? '', sealing?.salt ?? '']) {
      expect(all).not.toContain(secret)
    }
    // Every answer the frame gave is an address or an error, nothing else.
    expect(all).not.toMatch(/prf|ciphertext|authshare|"salt"/)
  }
  await phone.context.close()
})

test('behavior: passkey recovery added to a passcode wallet; the new device recovers with the passkey, no passcode', async () => {
  const phone = await device()
  const auth = await h.signIn(phone.page, `add.${Date.now()}@example.com`)
  const created = await h.call(phone.page, 'latch:wallet:create', {
    accessToken: auth.token,
    recoveryPin: 'Pk4dd3',
  })
  const address = created.ok?.address as string
  const credentialId = await registerInModal(phone.page, auth.token)
  const added = await h.call(phone.page, 'latch:wallet:add-passkey', {
    address,
    accessToken: auth.token,
    credentialId,
  })
  expect(added).toEqual({ ok: { address } })

  await phone.context.clearCookies()
  await phone.cdp.send('Storage.clearDataForOrigin', { origin: h.apiOrigin, storageTypes: 'all' })
  await h.open(phone.page)
  await phone.page.waitForFunction(() => 'call' in window, undefined, { timeout: 10_000 })
  const again = await h.signIn(phone.page, auth.user.email?.address ?? '')
  expect(
    (await h.call(phone.page, 'latch:wallet:connect', { address, accessToken: again.token })).error
      ?.code,
  ).toBe('wallet_not_on_device')
  expect(
    await h.call(phone.page, 'latch:wallet:recover', {
      address,
      accessToken: again.token,
      recoveryMethod: 'passkey',
    }),
  ).toEqual({ ok: { address } })
  expect(
    (await h.call(phone.page, 'latch:wallet:connect', { address, accessToken: again.token })).ok,
  ).toEqual({ address })
  await phone.context.close()
})

test('refusal: an authenticator without PRF is refused with passkey_prf_unsupported, and no wallet is stored', async () => {
  const noPrf = await device(false)
  const auth = await h.signIn(noPrf.page, `noprf.${Date.now()}@example.com`)
  const credentialId = await registerInModal(noPrf.page, auth.token)
  const refused = await h.call(noPrf.page, 'latch:wallet:create', {
    accessToken: auth.token,
    recoveryMethod: 'passkey',
    credentialId,
  })
  expect(refused.error).toEqual({
    code: 'passkey_prf_unsupported',
    message: 'This passkey cannot protect your wallet. Use a passcode instead.',
  })
  const rows = await h.latch.deps.db
    .selectFrom('wallets')
    .select('id')
    .where('user_id', '=', auth.user.id)
    .execute()
  expect(rows).toEqual([])
  await noPrf.context.close()
})
