import { createHash, randomBytes } from 'node:crypto'
import {
  SIWE_HASH_HEADER,
  SIWE_SECRET_HEADER,
  SIWE_STATEMENT,
  type User,
  type WalletAccount,
} from '@latch/shared'
import {
  type Abi,
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  getContractAddress,
  type Hex,
  http,
  keccak256,
  toHex,
} from 'viem'
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts'
import { createSiweMessage } from 'viem/siwe'
import { serializeErc6492Signature } from 'viem/utils'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { linkInAppWallet } from '../accounts/service.ts'
import { sweep } from '../sweep.ts'
import { ANVIL_ACCOUNTS, type RunningAnvil, startAnvil } from '../testing/anvil.ts'
import {
  type Answer,
  describeBackends,
  freshIp,
  type TestServer,
  type TestSignIn,
} from '../testing/test-server.ts'
import artifact from './contracts/test-wallet.json' with { type: 'json' }
import { readSiweMessage } from './message.ts'
import { SIWE_INIT_IP_LIMIT } from './routes.ts'
import { SIWE_NONCE_TTL_MS } from './service.ts'

const ORIGIN = 'http://localhost:5173'
const DOMAIN = 'localhost:5173'
const CHAIN_ID = 1

// One local chain (id 1, so the supported mainnet id resolves to it through the app's RPC
// URL) for both backends: contract wallets are deployed on it, and every signature that does
// not recover to its address is checked there, never on a public node.
let anvil: RunningAnvil
beforeAll(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID })
})
afterAll(async () => {
  await anvil?.stop()
})

type MessageFields = Partial<Parameters<typeof createSiweMessage>[0]>

let n = 0
const email = () => `siwe.${++n}.${Date.now()}@example.com`

describeBackends('siwe', (get) => {
  async function newApp(input: Parameters<TestServer['newApp']>[0] = {}) {
    return get().newApp({ rpcUrls: { [String(CHAIN_ID)]: anvil.url }, ...input })
  }

  /** Asks for a nonce for `address`, as the modal does. */
  async function init(
    appId: string,
    address: string,
    opts: { token?: string; ip?: string; headers?: Record<string, string> } = {},
  ): Promise<string> {
    const res = await get().request<{ nonce: string }>('/siwe/init', {
      appId,
      body: { address },
      ip: freshIp(),
      ...opts,
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body.nonce
  }

  /** The message the modal writes for `address` with `nonce`, with any field changed. */
  function message(address: Hex, nonce: string, fields: MessageFields = {}): string {
    return createSiweMessage({
      domain: DOMAIN,
      uri: ORIGIN,
      address,
      statement: SIWE_STATEMENT,
      version: '1',
      chainId: CHAIN_ID,
      nonce,
      issuedAt: get().clock.now(),
      ...fields,
    })
  }

  interface Signed {
    message: string
    signature: Hex
    chainId: number | string
    walletClientType: string
    connectorType: string
  }

  async function signed(
    account: PrivateKeyAccount,
    text: string,
    body: Partial<Signed> = {},
  ): Promise<Signed> {
    return {
      message: text,
      signature: await account.signMessage({ message: text }),
      chainId: CHAIN_ID,
      walletClientType: 'metamask',
      connectorType: 'injected',
      ...body,
    }
  }

  function post<T = Record<string, unknown>>(
    path: '/siwe/authenticate' | '/siwe/link',
    appId: string,
    body: Signed,
    opts: { token?: string; headers?: Record<string, string> } = {},
  ): Promise<Answer<T>> {
    return get().request<T>(path, { appId, body, ip: freshIp(), ...opts })
  }

  /** Init, sign and authenticate: the whole sign-in of a wallet. */
  async function walletLogin(appId: string, account: PrivateKeyAccount): Promise<TestSignIn> {
    const nonce = await init(appId, account.address)
    const res = await post<TestSignIn>(
      '/siwe/authenticate',
      appId,
      await signed(account, message(account.address, nonce)),
    )
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body
  }

  function expectRefused(res: Answer, code: string, status: number): void {
    expect(res.body).toMatchObject({ error: { code } })
    expect(res.status).toBe(status)
  }

  /** A message refused with 'Could not log in with wallet', the log naming `reason`. */
  function expectLoginFailed(res: Answer, reason: string): void {
    expect(res.body).toEqual({
      requestId: expect.any(String),
      error: {
        type: 'wallet_error',
        code: 'wallet_login_failed',
        message: 'Could not log in with wallet',
      },
    })
    expect(res.status).toBe(401)
    expect(get().logs.at(-1)).toContain(`message refused (${reason})`)
  }

  test('behavior: a new wallet signs in as a new user, then as the same returning user', async () => {
    const app = await newApp()
    const account = privateKeyToAccount(generatePrivateKey())
    const first = await walletLogin(app.id, account)
    expect(first.is_new_user).toBe(true)
    expect(first.token).toEqual(expect.any(String))
    expect(first.refresh_token).toEqual(expect.any(String))
    const wallet: Omit<WalletAccount, 'verifiedAt'> = {
      type: 'wallet',
      address: account.address,
      chainType: 'ethereum',
      chainId: 'eip155:1',
      walletClient: 'unknown',
      walletClientType: 'metamask',
      connectorType: 'injected',
      recoveryMethod: null,
    }
    expect(first.user.linkedAccounts).toEqual([
      { ...wallet, verifiedAt: expect.any(String) as string },
    ])
    expect(first.user.wallet).toMatchObject(wallet)

    const again = await walletLogin(app.id, account)
    expect(again.is_new_user).toBe(false)
    expect(again.user.id).toBe(first.user.id)
    // The session is real: a refresh answers the same user.
    const refreshed = await get().request<{ user: User }>('/sessions', {
      appId: app.id,
      body: { refresh_token: again.refresh_token },
    })
    expect(refreshed.body.user.id).toBe(first.user.id)
  })

  test('behavior: a nonce is 128 bits of hex, fresh each time, and the address may be any case', async () => {
    const app = await newApp()
    const account = privateKeyToAccount(generatePrivateKey())
    const a = await init(app.id, account.address)
    const b = await init(app.id, account.address.toLowerCase())
    expect(a).toMatch(/^[0-9a-f]{32}$/)
    expect(b).not.toBe(a)
    // The lowercase init's nonce serves the checksummed message.
    const res = await post(
      '/siwe/authenticate',
      app.id,
      await signed(account, message(account.address, b)),
    )
    expect(res.status).toBe(200)
  })

  describe('every check refuses on its own', () => {
    async function attempt(
      fields: MessageFields,
      body: Partial<Signed> = {},
      opts: { signer?: PrivateKeyAccount; origins?: string[] } = {},
    ) {
      const app = await newApp(opts.origins ? { allowedOrigins: opts.origins } : {})
      const account = privateKeyToAccount(generatePrivateKey())
      const nonce = await init(app.id, account.address)
      const text = message(account.address, nonce, fields)
      const sig = await signed(opts.signer ?? account, text, body)
      return { app, account, nonce, res: await post('/siwe/authenticate', app.id, sig) }
    }

    test('param: the valid message these variations start from is accepted', async () => {
      const { res } = await attempt({})
      expect(res.status).toBe(200)
    })

    test('error: a domain that is not an origin of the app', async () => {
      expectLoginFailed((await attempt({ domain: 'evil.example' })).res, 'domain')
      expectLoginFailed((await attempt({ domain: 'localhost:5174' })).res, 'domain')
      // The modal's or the API's origin is not the page the visitor sees.
      expectLoginFailed((await attempt({ domain: '127.0.0.1:5174' })).res, 'domain')
    })

    test('error: a URI on another origin than the domain', async () => {
      expectLoginFailed((await attempt({ uri: 'http://evil.example/' })).res, 'uri')
      expectLoginFailed((await attempt({ uri: 'https://localhost:5173/' })).res, 'uri')
      // Another registered origin of the same app is still not the message's domain.
      const other = await attempt(
        { uri: 'https://shop.example.com/' },
        {},
        { origins: [ORIGIN, 'https://shop.example.com'] },
      )
      expectLoginFailed(other.res, 'uri')
      // A path on the page's origin is the page.
      expect((await attempt({ uri: `${ORIGIN}/checkout?x=1` })).res.status).toBe(200)
    })

    test('error: a scheme that is not the origin’s', async () => {
      expectLoginFailed((await attempt({ scheme: 'https' })).res, 'scheme')
      expect((await attempt({ scheme: 'http' })).res.status).toBe(200)
    })

    test('error: a missing or different statement', async () => {
      expectLoginFailed((await attempt({ statement: undefined })).res, 'statement')
      expectLoginFailed((await attempt({ statement: 'Sign in.' })).res, 'statement')
    })

    test('error: an expired message', async () => {
      const past = new Date(get().clock.now().getTime() - 1000)
      expectLoginFailed((await attempt({ expirationTime: past })).res, 'expired')
      const future = new Date(get().clock.now().getTime() + 60_000)
      expect((await attempt({ expirationTime: future })).res.status).toBe(200)
    })

    test('error: a message not yet valid', async () => {
      const later = new Date(get().clock.now().getTime() + 60 * 60_000)
      expectLoginFailed((await attempt({ notBefore: later })).res, 'not_yet_valid')
    })

    test('error: issued in the future, or before its nonce was', async () => {
      const now = get().clock.now().getTime()
      const ahead = new Date(now + 60 * 60_000)
      expectLoginFailed((await attempt({ issuedAt: ahead })).res, 'issued_in_future')
      const before = new Date(now - 60 * 60_000)
      expectLoginFailed((await attempt({ issuedAt: before })).res, 'issued_before_nonce')
    })

    test('error: a chain id that is not the message’s, or not supported', async () => {
      expectLoginFailed((await attempt({}, { chainId: 10 })).res, 'chain')
      const unsupported = await attempt({ chainId: 31337 }, { chainId: 31337 })
      expect(unsupported.res.body).toEqual({
        requestId: expect.any(String),
        error: {
          type: 'validation_error',
          code: 'unsupported_chain',
          message: 'Unsupported chainId',
        },
      })
      expect(unsupported.res.status).toBe(400)
      // The body may name the chain as a number, its text, or CAIP-2.
      expect((await attempt({}, { chainId: '1' })).res.status).toBe(200)
      expect((await attempt({}, { chainId: 'eip155:1' })).res.status).toBe(200)
      expectRefused((await attempt({}, { chainId: 'eip155:01' })).res, 'unsupported_chain', 400)
    })

    test('error: a signature by another key', async () => {
      const other = privateKeyToAccount(generatePrivateKey())
      expectLoginFailed((await attempt({}, {}, { signer: other })).res, 'signature')
      expectLoginFailed((await attempt({}, { signature: `0x${'11'.repeat(65)}` })).res, 'signature')
    })

    test('error: a message that is not exactly EIP-4361', async () => {
      const app = await newApp()
      const account = privateKeyToAccount(generatePrivateKey())
      const variants: ((text: string) => string)[] = [
        (text) => `${text}\nTrailing: text`,
        (text) => `Welcome!\n${text}`,
        (text) => text.replace(account.address, account.address.toLowerCase()),
        (text) => text.replace('Version: 1', 'Version: 2'),
        (text) => text.replace(/Issued At: .*/, 'Issued At: yesterday'),
        (text) => text.replace(/\nIssued At: .*/, ''),
        (text) => text.replaceAll('\n', '\r\n'),
      ]
      for (const variant of variants) {
        const nonce = await init(app.id, account.address)
        const text = variant(message(account.address, nonce))
        const res = await post('/siwe/authenticate', app.id, await signed(account, text))
        expectLoginFailed(res, 'malformed')
      }
    })
  })

  describe('the nonce', () => {
    test('error: a signed message is accepted once; its replay is refused', async () => {
      const app = await newApp()
      const account = privateKeyToAccount(generatePrivateKey())
      const nonce = await init(app.id, account.address)
      const body = await signed(account, message(account.address, nonce))
      expect((await post('/siwe/authenticate', app.id, body)).status).toBe(200)
      const replay = await post('/siwe/authenticate', app.id, body)
      expect(replay.body).toEqual({
        requestId: expect.any(String),
        error: {
          type: 'flow_error',
          code: 'siwe_not_initialized',
          message: 'Must initialize SIWE flow first.',
        },
      })
      expect(replay.status).toBe(400)
    })

    test('error: two requests with one message at once: exactly one signs in', async () => {
      const app = await newApp()
      const account = privateKeyToAccount(generatePrivateKey())
      const nonce = await init(app.id, account.address)
      const body = await signed(account, message(account.address, nonce))
      const answers = await Promise.all([
        post('/siwe/authenticate', app.id, body),
        post('/siwe/authenticate', app.id, body),
      ])
      expect(answers.map((a) => a.status).sort()).toEqual([200, 400])
    })

    test('error: a refused message uses its nonce up', async () => {
      const app = await newApp()
      const account = privateKeyToAccount(generatePrivateKey())
      const nonce = await init(app.id, account.address)
      const bad = await signed(account, message(account.address, nonce, { domain: 'evil.example' }))
      expectLoginFailed(await post('/siwe/authenticate', app.id, bad), 'domain')
      const good = await signed(account, message(account.address, nonce))
      expectRefused(await post('/siwe/authenticate', app.id, good), 'siwe_not_initialized', 400)
    })

    test('error: a nonce nobody issued, or past its 10 minutes', async () => {
      const app = await newApp()
      const account = privateKeyToAccount(generatePrivateKey())
      const made = await signed(account, message(account.address, randomBytes(16).toString('hex')))
      expectRefused(await post('/siwe/authenticate', app.id, made), 'siwe_not_initialized', 400)

      const nonce = await init(app.id, account.address)
      get().clock.advance(SIWE_NONCE_TTL_MS + 1000)
      const late = await signed(account, message(account.address, nonce))
      expectRefused(await post('/siwe/authenticate', app.id, late), 'siwe_not_initialized', 400)
    })

    test('behavior: the sweeper deletes expired nonces and keeps live ones', async () => {
      const s = get()
      const app = await newApp()
      const address = privateKeyToAccount(generatePrivateKey()).address
      await init(app.id, address)
      s.clock.advance(SIWE_NONCE_TTL_MS + 1000)
      await init(app.id, address)
      await sweep(s.deps.db, s.clock)
      const rows = await s.deps.db
        .selectFrom('siwe_nonces')
        .select('expires_at')
        .where('app_id', '=', app.id)
        .execute()
      expect(rows).toHaveLength(1)
      expect(new Date(rows[0]?.expires_at ?? 0).getTime()).toBeGreaterThan(s.clock.now().getTime())
    })

    test('error: a nonce issued for another address', async () => {
      const app = await newApp()
      const account = privateKeyToAccount(generatePrivateKey())
      const victim = privateKeyToAccount(generatePrivateKey())
      const nonce = await init(app.id, victim.address)
      const res = await post(
        '/siwe/authenticate',
        app.id,
        await signed(account, message(account.address, nonce)),
      )
      expectRefused(res, 'siwe_not_initialized', 400)
      // It was not used up by the refusal: the address it was issued for still can.
      const own = await post(
        '/siwe/authenticate',
        app.id,
        await signed(victim, message(victim.address, nonce)),
      )
      expect(own.status).toBe(200)
    })

    test('error: a nonce issued for another app', async () => {
      const app = await newApp()
      const other = await newApp()
      const account = privateKeyToAccount(generatePrivateKey())
      const nonce = await init(other.id, account.address)
      const res = await post(
        '/siwe/authenticate',
        app.id,
        await signed(account, message(account.address, nonce)),
      )
      expectRefused(res, 'siwe_not_initialized', 400)
    })

    test('behavior: a nonce asked for with a browser hash is used only with its secret', async () => {
      const app = await newApp()
      const account = privateKeyToAccount(generatePrivateKey())
      const secret = randomBytes(32).toString('base64url')
      const hash = createHash('sha256').update(secret).digest('base64url')
      const bound = async () => {
        const nonce = await init(app.id, account.address, { headers: { [SIWE_HASH_HEADER]: hash } })
        return signed(account, message(account.address, nonce))
      }
      expectRefused(
        await post('/siwe/authenticate', app.id, await bound()),
        'siwe_not_initialized',
        400,
      )
      const wrong = { [SIWE_SECRET_HEADER]: randomBytes(32).toString('base64url') }
      expectRefused(
        await post('/siwe/authenticate', app.id, await bound(), { headers: wrong }),
        'siwe_not_initialized',
        400,
      )
      const right = { [SIWE_SECRET_HEADER]: secret }
      const ok = await post('/siwe/authenticate', app.id, await bound(), { headers: right })
      expect(ok.status).toBe(200)
      const junk = await get().request('/siwe/init', {
        appId: app.id,
        body: { address: account.address },
        headers: { [SIWE_HASH_HEADER]: 'not a hash' },
      })
      expectRefused(junk, 'invalid_data', 400)
    })

    test('error: init is limited per client address', async () => {
      const app = await newApp()
      const ip = freshIp()
      const address = privateKeyToAccount(generatePrivateKey()).address
      for (let i = 0; i < SIWE_INIT_IP_LIMIT.max; i++) await init(app.id, address, { ip })
      const over = await get().request('/siwe/init', { appId: app.id, ip, body: { address } })
      expectRefused(over, 'too_many_requests', 429)
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0)
      // Another client is not held back.
      await init(app.id, address)
    })

    test('error: init refuses a malformed address, an app without wallet login and the allowlist', async () => {
      const app = await newApp()
      const bad = await get().request('/siwe/init', { appId: app.id, body: { address: '0x12' } })
      expectRefused(bad, 'invalid_data', 400)
      const noWallet = await newApp({ loginMethods: ['email'] })
      const address = privateKeyToAccount(generatePrivateKey()).address
      const off = await get().request('/siwe/init', { appId: noWallet.id, body: { address } })
      expectRefused(off, 'method_not_available', 403)
      const listed = privateKeyToAccount(generatePrivateKey())
      const guarded = await newApp({
        allowlist: { enabled: true, entries: [listed.address.toLowerCase()] },
      })
      const out = await get().request('/siwe/init', { appId: guarded.id, body: { address } })
      expectRefused(out, 'allowlist_rejected', 403)
      expect((await walletLogin(guarded.id, listed)).is_new_user).toBe(true)
    })
  })

  test('behavior: the modal origin may send the browser-binding headers (CORS)', async () => {
    const modal = get().deps.config.modalOrigin ?? ''
    const pre = await get().api.request('/api/v1/siwe/init', {
      method: 'OPTIONS',
      headers: {
        origin: modal,
        'access-control-request-method': 'POST',
        'access-control-request-headers': `${SIWE_HASH_HEADER},${SIWE_SECRET_HEADER}`,
      },
    })
    expect(pre.headers.get('access-control-allow-origin')).toBe(modal)
    const allowed = pre.headers.get('access-control-allow-headers') ?? ''
    expect(allowed).toContain(SIWE_HASH_HEADER)
    expect(allowed).toContain(SIWE_SECRET_HEADER)
  })

  describe('link and unlink', () => {
    test('behavior: a signed-in user links a wallet, a second user is refused it, the first unlinks it', async () => {
      const s = get()
      const app = await newApp()
      const alice = await s.emailLogin(app.id, email())
      const bob = await s.emailLogin(app.id, email())
      const account = privateKeyToAccount(generatePrivateKey())

      const nonce = await init(app.id, account.address, { token: alice.token })
      const body = await signed(account, message(account.address, nonce), {
        walletClientType: 'rainbow',
        connectorType: 'wallet_connect',
      })
      const linked = await post<User>('/siwe/link', app.id, body, { token: alice.token })
      expect(linked.status, JSON.stringify(linked.body)).toBe(200)
      expect(linked.body.id).toBe(alice.user.id)
      expect(linked.body.wallet).toMatchObject({
        address: account.address,
        chainId: 'eip155:1',
        walletClient: 'unknown',
        walletClientType: 'rainbow',
        connectorType: 'wallet_connect',
      })
      // Signing in with the wallet is now Alice's sign-in.
      expect((await walletLogin(app.id, account)).user.id).toBe(alice.user.id)

      const bobNonce = await init(app.id, account.address, { token: bob.token })
      const taken = await post(
        '/siwe/link',
        app.id,
        await signed(account, message(account.address, bobNonce)),
        { token: bob.token },
      )
      expect(taken.body).toEqual({
        requestId: expect.any(String),
        error: {
          type: 'api_error',
          code: 'linked_to_another_user',
          message: 'User already exists for this address',
        },
      })
      expect(taken.status).toBe(400)

      const unlinked = await s.request<User>('/siwe/unlink', {
        appId: app.id,
        token: alice.token,
        body: { address: account.address.toLowerCase() },
      })
      expect(unlinked.status).toBe(200)
      expect(unlinked.body.wallet).toBeUndefined()
      expect(unlinked.body.email).toBeDefined()
      // Now free, the address signs in as a new user.
      expect((await walletLogin(app.id, account)).is_new_user).toBe(true)
    })

    test('error: a nonce serves the flow that asked for it: signed out a sign-in, a user only their link', async () => {
      const s = get()
      const app = await newApp()
      const alice = await s.emailLogin(app.id, email())
      const bob = await s.emailLogin(app.id, email())
      const account = privateKeyToAccount(generatePrivateKey())
      const attempt = async (
        initToken: string | undefined,
        path: '/siwe/authenticate' | '/siwe/link',
        token?: string,
      ) => {
        const nonce = await init(app.id, account.address, initToken ? { token: initToken } : {})
        const body = await signed(account, message(account.address, nonce))
        return post(path, app.id, body, token ? { token } : {})
      }
      expectRefused(
        await attempt(undefined, '/siwe/link', alice.token),
        'siwe_not_initialized',
        400,
      )
      expectRefused(await attempt(alice.token, '/siwe/authenticate'), 'siwe_not_initialized', 400)
      expectRefused(
        await attempt(alice.token, '/siwe/link', bob.token),
        'siwe_not_initialized',
        400,
      )
      expectRefused(await attempt(undefined, '/siwe/link'), 'not_authenticated', 401)
      expect((await attempt(alice.token, '/siwe/link', alice.token)).status).toBe(200)
    })

    test('error: a wallet-only user cannot unlink its last sign-in method; nobody unlinks another’s wallet', async () => {
      const s = get()
      const app = await newApp()
      const account = privateKeyToAccount(generatePrivateKey())
      const only = await walletLogin(app.id, account)
      const last = await s.request('/siwe/unlink', {
        appId: app.id,
        token: only.token,
        body: { address: account.address },
      })
      expectRefused(last, 'last_account_unlink_forbidden', 400)
      const other = await s.emailLogin(app.id, email())
      const theirs = await s.request('/siwe/unlink', {
        appId: app.id,
        token: other.token,
        body: { address: account.address },
      })
      expectRefused(theirs, 'not_found', 404)
      const signedOut = await s.request('/siwe/unlink', {
        appId: app.id,
        body: { address: account.address },
      })
      expectRefused(signedOut, 'not_authenticated', 401)
    })

    test('error: the in-app wallet cannot sign in, be linked or unlinked through SIWE', async () => {
      const s = get()
      const app = await newApp()
      const owner = await s.emailLogin(app.id, email())
      const account = privateKeyToAccount(generatePrivateKey())
      await linkInAppWallet(s.deps, app.id, owner.user.id, {
        type: 'wallet',
        address: account.address,
        chainType: 'ethereum',
        chainId: 'eip155:1',
        walletClient: 'latch',
        walletClientType: 'latch',
        connectorType: 'embedded',
        recoveryMethod: 'latch',
      })
      const embedded = {
        requestId: expect.any(String),
        error: {
          type: 'flow_error',
          code: 'embedded_wallet_link_forbidden',
          message: 'Cannot link or login with embedded wallet',
        },
      }
      const nonce = await init(app.id, account.address)
      const login = await post(
        '/siwe/authenticate',
        app.id,
        await signed(account, message(account.address, nonce)),
      )
      expect(login.body).toEqual(embedded)
      expect(login.status).toBe(400)

      const linkNonce = await init(app.id, account.address, { token: owner.token })
      const link = await post(
        '/siwe/link',
        app.id,
        await signed(account, message(account.address, linkNonce)),
        { token: owner.token },
      )
      expect(link.body).toEqual(embedded)

      // An external wallet claiming Latch's client is refused as well.
      const external = privateKeyToAccount(generatePrivateKey())
      const claimNonce = await init(app.id, external.address)
      const claim = await post(
        '/siwe/authenticate',
        app.id,
        await signed(external, message(external.address, claimNonce), {
          walletClientType: 'latch',
          connectorType: 'embedded',
        }),
      )
      expect(claim.body).toEqual(embedded)

      const unlink = await s.request('/siwe/unlink', {
        appId: app.id,
        token: owner.token,
        body: { address: account.address },
      })
      expectRefused(unlink, 'embedded_wallet_unlink_forbidden', 400)
    })
  })

  test('behavior: an EOA signs in without the chain’s node; a node that does not answer refuses, never a 500', async () => {
    // Nothing listens on port 1: every call to this node fails at once.
    const node = 'http://127.0.0.1:1/v2/node-api-key-0123456789'
    const app = await get().newApp({ rpcUrls: { [String(CHAIN_ID)]: node } })
    const account = privateKeyToAccount(generatePrivateKey())
    expect((await walletLogin(app.id, account)).is_new_user).toBe(true)
    const nonce = await init(app.id, account.address)
    const stranger = privateKeyToAccount(generatePrivateKey())
    const res = await post(
      '/siwe/authenticate',
      app.id,
      await signed(stranger, message(account.address, nonce)),
    )
    expect(get().logs.at(-2)).toContain("siwe: the chain's node did not answer")
    // The node's URL may carry the provider's API key: it stays out of the log.
    expect(get().logs.join('\n')).not.toContain('node-api-key')
    expectLoginFailed(res, 'rpc_unavailable')
  })

  test('error: a node that serves another chain than the message’s is not asked', async () => {
    // The app points Optimism (10) at the anvil chain, whose id is 1.
    const app = await get().newApp({ rpcUrls: { '10': anvil.url } })
    const account = privateKeyToAccount(generatePrivateKey())
    const nonce = await init(app.id, account.address)
    const stranger = privateKeyToAccount(generatePrivateKey())
    const text = message(account.address, nonce, { chainId: 10 })
    const res = await post(
      '/siwe/authenticate',
      app.id,
      await signed(stranger, text, { chainId: 10 }),
    )
    expect(get().logs.at(-2)).toContain('the node for chain 10 serves chain 1')
    expectLoginFailed(res, 'rpc_unavailable')
  })

  describe('contract wallets on the chain (anvil)', () => {
    const { TestWallet, TestWalletFactory } = artifact.contracts
    const deployer = privateKeyToAccount(ANVIL_ACCOUNTS[0].privateKey)
    let factory: Hex

    async function deploy(abi: Abi, bytecode: string, args: unknown[]): Promise<Hex> {
      const client = createWalletClient({ account: deployer, transport: http(anvil.url) })
      const hash = await client.deployContract({
        abi,
        bytecode: bytecode as Hex,
        args,
        chain: null,
      })
      const chain = createPublicClient({ transport: http(anvil.url), pollingInterval: 100 })
      const receipt = await chain.waitForTransactionReceipt({ hash, timeout: 10_000 })
      expect(receipt.status).toBe('success')
      if (!receipt.contractAddress) throw new Error('no contract deployed')
      return getAddress(receipt.contractAddress)
    }

    beforeAll(async () => {
      factory = await deploy(TestWalletFactory.abi as Abi, TestWalletFactory.bytecode, [])
    })

    /** A signer whose messages carry the wallet's address but its owner's signature. */
    function asWallet(owner: PrivateKeyAccount, wallet: Hex, wrap?: (sig: Hex) => Hex) {
      return {
        ...owner,
        address: wallet,
        signMessage: async ({ message: m }: { message: string }) => {
          const sig = await owner.signMessage({ message: m })
          return wrap ? wrap(sig) : sig
        },
      } as PrivateKeyAccount
    }

    test('behavior: a deployed EIP-1271 wallet signs in with its owner’s signature', async () => {
      const app = await newApp()
      const owner = privateKeyToAccount(generatePrivateKey())
      const wallet = await deploy(TestWallet.abi as Abi, TestWallet.bytecode, [owner.address])
      const auth = await walletLogin(app.id, asWallet(owner, wallet))
      expect(auth.is_new_user).toBe(true)
      expect(auth.user.wallet?.address).toBe(wallet)

      const stranger = privateKeyToAccount(generatePrivateKey())
      const nonce = await init(app.id, wallet)
      const res = await post(
        '/siwe/authenticate',
        app.id,
        await signed(asWallet(stranger, wallet), message(wallet, nonce)),
      )
      expectLoginFailed(res, 'signature')
    })

    test('behavior: a counterfactual EIP-6492 wallet signs in before it is deployed', async () => {
      const app = await newApp()
      const owner = privateKeyToAccount(generatePrivateKey())
      const salt = keccak256(toHex(`siwe-${Date.now()}-${Math.random()}`))
      const initCode =
        `${TestWallet.bytecode}${encodeAbiParameters([{ type: 'address' }], [owner.address]).slice(2)}` as Hex
      const wallet = getContractAddress({
        opcode: 'CREATE2',
        from: factory,
        salt,
        bytecode: initCode,
      })
      expect(await anvil.rpc('eth_getCode', [wallet, 'latest'])).toBe('0x')
      const wrap = (signature: Hex) =>
        serializeErc6492Signature({
          address: factory,
          data: encodeFunctionData({
            abi: TestWalletFactory.abi as Abi,
            functionName: 'deploy',
            args: [owner.address, salt],
          }),
          signature,
        })
      const auth = await walletLogin(app.id, asWallet(owner, wallet, wrap))
      expect(auth.user.wallet?.address).toBe(wallet)
      // A real smart wallet's deployment call and passkey data run to kilobytes: 6 KB of
      // calldata past the factory's arguments (which Solidity ignores) still verifies.
      const long = (signature: Hex) =>
        serializeErc6492Signature({
          address: factory,
          data: `${encodeFunctionData({
            abi: TestWalletFactory.abi as Abi,
            functionName: 'deploy',
            args: [owner.address, salt],
          })}${'ab'.repeat(6000)}`,
          signature,
        })
      const again = await walletLogin(app.id, asWallet(owner, wallet, long))
      expect(again.user.id).toBe(auth.user.id)
      // The check deployed nothing: it ran in an eth_call.
      expect(await anvil.rpc('eth_getCode', [wallet, 'latest'])).toBe('0x')

      const stranger = privateKeyToAccount(generatePrivateKey())
      const nonce = await init(app.id, wallet)
      const res = await post(
        '/siwe/authenticate',
        app.id,
        await signed(asWallet(stranger, wallet, wrap), message(wallet, nonce)),
      )
      expectLoginFailed(res, 'signature')
    })
  })
})

describe('readSiweMessage', () => {
  const fields = {
    domain: DOMAIN,
    uri: ORIGIN,
    address: ANVIL_ACCOUNTS[0].address,
    statement: SIWE_STATEMENT,
    version: '1' as const,
    chainId: 1,
    nonce: 'a'.repeat(32),
    issuedAt: new Date('2026-11-23T22:00:00.000Z'),
  }

  test('behavior: reads the modal’s message, and a timestamp in any RFC 3339 form', () => {
    const text = createSiweMessage(fields)
    expect(readSiweMessage(text)).toMatchObject({ ...fields })
    const offset = text.replace('2026-11-23T22:00:00.000Z', '2026-11-23T23:00:00+01:00')
    expect(readSiweMessage(offset)?.issuedAt?.toISOString()).toBe('2026-11-23T22:00:00.000Z')
  })

  test('error: anything but the exact text of its fields', () => {
    const text = createSiweMessage(fields)
    expect(readSiweMessage(`${text}\n`)).toBeNull()
    expect(readSiweMessage(` ${text}`)).toBeNull()
    expect(readSiweMessage(text.replace('Chain ID: 1', 'Chain ID: 01'))).toBeNull()
    expect(readSiweMessage(text.replace('Nonce: aaaa', 'Nonce: aa-a'))).toBeNull()
    expect(readSiweMessage(text.replace('2026-11-23T22:00:00.000Z', '2026-11-23 22:00'))).toBeNull()
    expect(readSiweMessage('')).toBeNull()
  })
})
