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
import { type VirtualCredential, virtualAuthenticator } from './authenticator.ts'
import { expectAccessible, modalFrame } from './axe.ts'
import {
  expectOk,
  latchCall,
  newEmail,
  screen,
  settle,
  signedInByCode,
  signInByEmail,
  submitEmail,
  visit,
  waitEmailCode,
} from './flows.ts'
import { type HostPage, WAIT_MS, withTimeout } from './harness.ts'
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

/**
 * A visitor who signs up with a passkey on the app's landing, in a browser of their own (`onLanding`
 * runs on the landing first): the result and the credential their authenticator now holds.
 */
async function signUpWithPasskey(
  appId: string,
  onLanding: (hp: HostPage) => Promise<void> = async () => {},
): Promise<{ created: LoginResult; credential: VirtualCredential }> {
  const hp = await h().open({ appId })
  const device = await virtualAuthenticator(hp.page)
  const signUp = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  await onLanding(hp)
  await hp.modal.getByRole('button', { name: 'Use a passkey' }).click()
  await visit(hp, SCREEN)
  await screen(hp.modal, SCREEN).getByRole('button', { name: 'Create a passkey' }).click()
  const created = expectOk(await settle(signUp, 'login() by a new passkey'))
  const [credential] = await device.credentials()
  if (!credential) throw new Error('the authenticator holds no credential')
  return { created, credential }
}

test('behavior: sign up with a passkey, then sign in with the synced credential in a new browser; a replayed assertion and one without the asking browser’s secret are refused', async () => {
  const app = await h().createApp({ loginMethods: ['email', 'passkey'] })
  const { created, credential } = await signUpWithPasskey(app.id, async (hp) => {
    await expect
      .poll(() => hp.modal.getByTestId('email-input').getAttribute('autocomplete'))
      .toBe('username webauthn')
  })
  expect(created.isNewUser).toBe(true)
  expect(passkeysOf(created.user)).toHaveLength(1)
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

test('behavior: the e-mail field’s passkey autofill signs in with the passkey the visitor picks; refusal: once the visitor closed the modal, or went on to the code screen, it signs nobody in, even where the authenticator answers', async () => {
  const app = await h().createApp({ loginMethods: ['email', 'passkey'] })
  const { created, credential } = await signUpWithPasskey(app.id)

  // A browser with the synced passkey whose authenticator answers every request at once, the
  // autofill's included (as a visitor who picks the passkey in the list). The autofill's
  // request is set up while the landing shows; `holdOptions()` keeps its options back until
  // the visitor has left that landing.
  const other = await h().open({ appId: app.id })
  await virtualAuthenticator(other.page, { credentials: [credential] })
  let assertions = 0
  await other.context.route(`**${API_PREFIX}/passkeys/authenticate`, async (route) => {
    assertions++
    await route.continue()
  })
  const OPTIONS = `**${API_PREFIX}/passkeys/authenticate/options`
  let gate: { asked: () => void; held: Promise<void> } | null = null
  await other.context.route(OPTIONS, async (route) => {
    const current = gate
    current?.asked()
    await current?.held
    await route.continue()
  })
  /** Holds the next options request: resolves once it is asked; `release()` answers it. */
  const holdOptions = () => {
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let asked = () => {}
    const optionsAsked = new Promise<void>((resolve) => {
      asked = resolve
    })
    gate = { asked, held }
    return {
      asked: withTimeout(optionsAsked, WAIT_MS, 'the autofill’s options request'),
      /** Answers the held request, once it has been answered. */
      async release() {
        const answered = other.page.waitForResponse((res) => res.url().endsWith('/options'), {
          timeout: WAIT_MS,
        })
        gate = null
        release()
        await answered
      },
    }
  }

  // Closed: the landing's request is over.
  const closed = holdOptions()
  const byClosing = latchCall<LoginResult>(other.page, 'login')
  await visit(other, 'LANDING')
  await closed.asked
  await other.modal.getByTestId('close-button').click()
  expect((await settle(byClosing, 'login() closed')).ok).toBe(false)
  await closed.release()

  // On the code screen: the e-mail signs in, not the passkey.
  const onCode = holdOptions()
  const email = newEmail('autofill')
  const byEmail = latchCall<LoginResult>(other.page, 'login')
  await visit(other, 'LANDING')
  await onCode.asked
  await submitEmail(other.modal, email)
  const code = await waitEmailCode(h(), email)
  await visit(other, 'AWAITING_PASSWORDLESS_CODE')
  await onCode.release()
  const signedIn = await signedInByCode(other, code, byEmail, 'login() by e-mail')
  expect(signedIn.user.email?.address).toBe(email)
  expect(signedIn.user.id).not.toBe(created.user.id)
  expect(assertions).toBe(0)

  // Back on a landing, the field's request is made again, and the passkey answers it.
  expectOk(await settle(latchCall(other.page, 'logout'), 'logout()'))
  const byAutofill = latchCall<LoginResult>(other.page, 'login')
  const again = expectOk(await settle(byAutofill, 'login() by the autofill'))
  expect(again.user.id).toBe(created.user.id)
  expect(assertions).toBe(1)
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

/**
 * An init script for every frame: in the modal's frame (not its windows) the browser has no
 * `document.featurePolicy` and refuses to create a credential, as Safari does in a cross-origin
 * frame. Counts the frame's attempts, so the test can show the frame never tried.
 */
function frameMayNotCreate(modalOrigin: string): void {
  if (window.top === window || location.origin !== modalOrigin) return
  Reflect.deleteProperty(Document.prototype, 'featurePolicy')
  const w = window as unknown as { __frameCreates: number }
  w.__frameCreates = 0
  navigator.credentials.create = () => {
    w.__frameCreates++
    return Promise.reject(
      new DOMException(
        'The origin of the document is not the same as its ancestors.',
        'NotAllowedError',
      ),
    )
  }
}

test('behavior: where the frame may not create a passkey (as in Safari), sign-up runs in a window of the modal origin on its own click and the frame signs in with what it made; closing the window cancels quietly; a page of another origin that opens the window hears nothing and cannot drive it', async () => {
  const app = await h().createApp({ loginMethods: ['email', 'passkey'] })
  const hp = await h().open({
    appId: app.id,
    prepare: async (context) => {
      await context.addInitScript(frameMayNotCreate, h().modalUrl)
    },
  })
  const signUp = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  await hp.modal.getByRole('button', { name: 'Use a passkey' }).click()
  await visit(hp, SCREEN)
  const create = screen(hp.modal, SCREEN).getByRole('button', { name: 'Create a passkey' })

  // Closed by the visitor: no error, the buttons are back, login() still waits.
  const firstWindow = hp.context.waitForEvent('page', { timeout: WAIT_MS })
  await create.click()
  const closed = await firstWindow
  await closed.waitForLoadState('load')
  await closed.close()
  await expect.poll(() => create.isEnabled(), { timeout: WAIT_MS }).toBe(true)
  expect(await screen(hp.modal, SCREEN).getByRole('alert').count()).toBe(0)

  const opened = hp.context.waitForEvent('page', { timeout: WAIT_MS })
  await create.click()
  const win = await opened
  expect(new URL(win.url()).origin).toBe(h().modalUrl)
  await virtualAuthenticator(win)
  const go = win.getByRole('button', { name: 'Continue with a passkey' })
  await go.waitFor({ state: 'visible' })
  expect(await win.title()).toBe('Create a passkey')
  await expectAccessible(win, 'the passkey window')
  const gone = win.waitForEvent('close', { timeout: WAIT_MS })
  await go.click()
  const created = expectOk(await settle(signUp, 'login() by a passkey made in the window'))
  await gone
  expect(created.isNewUser).toBe(true)
  // The server verified the window's credential: its origin is the modal's, its RP ID the API's
  // registrable domain, as for one made in the frame.
  expect(passkeysOf(created.user)).toHaveLength(1)
  // The frame never created anything itself.
  const frame = await modalFrame(hp.page)
  expect(
    await frame.evaluate(() => (window as unknown as { __frameCreates: number }).__frameCreates),
  ).toBe(0)

  // The host page (another origin) opens the window itself: the window's 'ready' is for the
  // modal's origin only, and a 'create' the page sends is not taken.
  const nonce = 'ab'.repeat(16)
  const foreign = hp.context.waitForEvent('page', { timeout: WAIT_MS })
  await hp.page.evaluate(
    ({ url }) => {
      const w = window as unknown as { __heard: unknown[]; __win: Window | null }
      w.__heard = []
      // The modal's own messages to the SDK pass here too: only the window's count.
      window.addEventListener('message', (e) => {
        if ((e.data as { tag?: unknown } | null)?.tag === 'latch:passkey-window')
          w.__heard.push(e.data)
      })
      w.__win = window.open(url, 'foreign', 'popup')
    },
    { url: `${h().modalUrl}/?latch-passkey-window#${nonce}` },
  )
  const stray = await foreign
  await stray.waitForLoadState('load')
  await hp.page.evaluate((n) => {
    const w = window as unknown as { __win: Window | null }
    const publicKey = {
      challenge: new Uint8Array(32),
      rp: { name: 'x' },
      user: { id: new Uint8Array(8), name: 'x', displayName: 'x' },
      pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
    }
    const texts = { title: 'Forged', button: 'Forged', waiting: '', lang: 'en', dir: 'ltr' }
    w.__win?.postMessage(
      { tag: 'latch:passkey-window', nonce: n, type: 'create', publicKey, texts },
      '*',
    )
  }, nonce)
  // A round trip through the window after the message was posted: it would have shown by now.
  await stray.evaluate(() => new Promise((r) => setTimeout(r, 50)))
  expect(await stray.getByRole('button').count()).toBe(0)
  expect(
    await hp.page.evaluate(() => (window as unknown as { __heard: unknown[] }).__heard),
  ).toEqual([])
  await stray.close()
})
