/**
 * Passkeys in the same-site deployment (www., auth., api.example.test over HTTPS; RP ID
 * example.test: browsers take no IP address as an RP ID), with Chromium's virtual
 * authenticator (CDP WebAuthn: CTAP2, internal, resident keys, user verification, PRF). A
 * sign-up registers a passkey; a new browser holding the same credential (a synced passkey)
 * signs in with it; a replayed assertion and an assertion presented without the asking
 * browser's secret are refused at the HTTP level; an e-mail user links a passkey and removes it.
 */
import {
  API_PREFIX,
  APP_ID_HEADER,
  CLIENT_HEADER,
  CLIENT_NAME,
  type LoginResult,
  type PasskeyAccount,
  type User,
} from '@latch/shared'
import { expect, test } from 'vitest'
import { virtualAuthenticator } from './authenticator.ts'
import { expectOk, latchCall, newEmail, screen, settle, signInByEmail, visit } from './flows.ts'
import { WAIT_MS } from './harness.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness({ sameSite: true })
const SCREEN = 'PASSKEY_SCREEN'

const passkeysOf = (user: User) =>
  user.linkedAccounts.filter((a): a is PasskeyAccount => a.type === 'passkey')

/** POSTs to the API from this process: another client, with no browser secret of its own. */
async function post(appId: string, path: string, body: unknown) {
  const res = await fetch(`${h().apiDirectUrl}${API_PREFIX}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [APP_ID_HEADER]: appId,
      [CLIENT_HEADER]: CLIENT_NAME,
    },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as { error?: { code?: string } } }
}

test('behavior: sign up with a passkey, then sign in with the synced credential in a new browser; a replayed assertion and one without the asking browser’s secret are refused', async () => {
  const app = await h().createApp({ loginMethods: ['email', 'passkey'] })
  const hp = await h().open({ appId: app.id })
  const device = await virtualAuthenticator(hp.page)
  const signUp = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  await expect
    .poll(() => hp.modal.getByTestId('email-input').getAttribute('autocomplete'))
    .toBe('username webauthn')
  await hp.modal.getByRole('button', { name: 'Use a passkey' }).click()
  await visit(hp, SCREEN)
  await screen(hp.modal, SCREEN).getByRole('button', { name: 'Create a passkey' }).click()
  const created = expectOk(await settle(signUp, 'login() by a new passkey'))
  expect(created.isNewUser).toBe(true)
  expect(passkeysOf(created.user)).toHaveLength(1)
  const [credential] = await device.credentials()
  if (!credential) throw new Error('the authenticator holds no credential')
  expect(credential.rpId).toBe('example.test')
  expect(credential.isResidentCredential).toBe(true)

  // A new browser with the same credential: a passkey synced to another device.
  const other = await h().open({ appId: app.id })
  const synced = await virtualAuthenticator(other.page, { credentials: [credential] })
  await synced.present(false)
  // The modal's assertion is kept and held back, to present it again from here.
  let sent: { credential: unknown; browser_secret: string } | undefined
  await other.context.route(`**${API_PREFIX}/passkeys/authenticate`, async (route) => {
    sent ??= route.request().postDataJSON() as typeof sent
    await route.continue()
  })
  const signIn = latchCall<LoginResult>(other.page, 'login')
  await visit(other, 'LANDING')
  await other.modal.getByRole('button', { name: 'Use a passkey' }).click()
  await visit(other, SCREEN)
  await synced.present(true)
  await screen(other.modal, SCREEN).getByRole('button', { name: 'Sign in with a passkey' }).click()
  const again = expectOk(await settle(signIn, 'login() by the synced passkey'))
  expect(again.isNewUser).toBe(false)
  expect(again.user.id).toBe(created.user.id)

  if (!sent) throw new Error('the modal sent no assertion')
  const replayed = await post(app.id, '/passkeys/authenticate', sent)
  expect(replayed.status).toBe(400)
  expect(replayed.body.error?.code).toBe('passkey_not_initialized')

  // An assertion for a challenge another browser asked for: held back from the server, then
  // presented without that browser's secret. Refused, and the challenge is gone with it.
  let heldBack: { credential: unknown; browser_secret: string } | undefined
  await other.context.unroute(`**${API_PREFIX}/passkeys/authenticate`)
  await other.context.route(`**${API_PREFIX}/passkeys/authenticate`, async (route) => {
    heldBack = route.request().postDataJSON() as typeof heldBack
    await route.abort()
  })
  await latchCall(other.page, 'logout')
  await synced.present(false)
  // This login() stays pending: its assertion never reaches the server.
  void latchCall<LoginResult>(other.page, 'login')
  await visit(other, 'LANDING')
  await other.modal.getByRole('button', { name: 'Use a passkey' }).click()
  await visit(other, SCREEN)
  await synced.present(true)
  await screen(other.modal, SCREEN).getByRole('button', { name: 'Sign in with a passkey' }).click()
  await expect.poll(() => heldBack !== undefined, { timeout: WAIT_MS }).toBe(true)
  if (!heldBack) throw new Error('the modal sent no assertion')
  const stranger = await post(app.id, '/passkeys/authenticate', {
    ...heldBack,
    browser_secret: 'A'.repeat(43),
  })
  expect(stranger.status).toBe(400)
  expect(stranger.body.error?.code).toBe('passkey_not_initialized')
  const late = await post(app.id, '/passkeys/authenticate', heldBack)
  expect(late.body.error?.code).toBe('passkey_not_initialized')
  // The modal says what went wrong and stays usable.
  await screen(other.modal, SCREEN).getByRole('alert').waitFor({ state: 'visible' })
})

test('behavior: an e-mail user links a passkey, sees it by name, renames it and removes it', async () => {
  const app = await h().createApp({ loginMethods: ['email', 'passkey'] })
  const hp = await h().open({ appId: app.id })
  await virtualAuthenticator(hp.page)
  await signInByEmail(h(), hp, newEmail('passkey-link'))
  const linking = latchCall<User>(hp.page, 'link', 'passkey')
  await visit(hp, SCREEN)
  const view = screen(hp.modal, SCREEN)
  await view.getByRole('heading', { name: 'Your passkeys' }).waitFor()
  await view.getByRole('button', { name: 'Add a passkey' }).click()
  await view.getByTestId('passkey-item').first().waitFor({ state: 'visible' })
  expect(await view.getByTestId('passkey-name').allTextContents()).toEqual(['Passkey 1'])
  await expect
    .poll(() => view.getByRole('status').textContent(), { timeout: WAIT_MS })
    .toBe('Passkey added')
  await visit(hp, SCREEN)

  await view.getByRole('button', { name: 'Rename' }).click()
  await view.getByLabel('New name for Passkey 1').fill('Laptop')
  await visit(hp, SCREEN)
  await view.getByRole('button', { name: 'Save' }).click()
  await expect
    .poll(() => view.getByTestId('passkey-name').allTextContents(), { timeout: WAIT_MS })
    .toEqual(['Laptop'])

  await view.getByRole('button', { name: 'Remove Laptop' }).click()
  await view.getByText('No passkeys yet.').waitFor({ state: 'visible' })
  await view.getByRole('button', { name: 'Done' }).click()
  const user = expectOk(await settle(linking, "link('passkey')"))
  expect(passkeysOf(user)).toEqual([])
  expect(user.email).toBeDefined()
  const rows = await h()
    .api.deps.db.selectFrom('passkeys')
    .select('credential_id')
    .where('app_id', '=', app.id)
    .execute()
  expect(rows).toEqual([])
})
