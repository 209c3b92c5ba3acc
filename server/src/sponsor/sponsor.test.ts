/**
 * The app's sponsor on anvil (Prague rules): the operator API makes it and sets its policy, the
 * wallet frame's request (same-origin, wallet credential) brings the visitor's signed batch and
 * first-time authorization, and one type-4 transaction from the sponsor runs it while the
 * visitor's wallet holds no ETH. Each refusal is checked to change nothing.
 */
import { BATCH_DOMAIN, BATCH_TYPES, type BatchCall, LATCH_DELEGATE_ADDRESS } from '@latch/shared'
import {
  type Abi,
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  type Hex,
  http,
  type PrivateKeyAccount,
  parseEther,
  toFunctionSelector,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { mainnet } from 'viem/chains'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { linkInAppWallet } from '../accounts/service.ts'
import { ANVIL_ACCOUNTS, type RunningAnvil, startAnvil } from '../testing/anvil.ts'
import { type Answer, describeBackends, type TestSignIn } from '../testing/test-server.ts'
import type { Compiled } from './contracts/compile.ts'
import { TEST_CONTRACTS } from './contracts/test/artifact.ts'
import { deployDelegate } from './deploy.ts'
import type { CallsStatus } from './service.ts'

const CHAIN_ID = 1
const OLD_CHAIN_ID = 11155111
const KEY = 'operator-key-operator-key-operator-key-0123'
const funder = privateKeyToAccount(ANVIL_ACCOUNTS[0].privateKey)

let anvil: RunningAnvil
let contracts: Record<string, Compiled>
let client: ReturnType<typeof createPublicClient>
let funderWallet: ReturnType<typeof createWalletClient>
let token: Hex

beforeAll(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID, hardfork: 'prague' })
  contracts = TEST_CONTRACTS
  const transport = http(anvil.url)
  client = createPublicClient({ chain: mainnet, transport })
  funderWallet = createWalletClient({ account: funder, chain: mainnet, transport })
  await deployDelegate({
    rpcUrl: anvil.url,
    chainId: CHAIN_ID,
    privateKey: ANVIL_ACCOUNTS[1].privateKey,
  })
  const t = contracts.TestToken as Compiled
  const hash = await funderWallet.deployContract({
    abi: t.abi,
    bytecode: t.bytecode,
    account: funder,
    chain: mainnet,
  })
  token = (await client.waitForTransactionReceipt({ hash })).contractAddress as Hex
}, 60_000)

afterAll(async () => {
  await anvil?.stop()
})

const tokenAbi = () => contracts.TestToken?.abi as Abi
const call = (functionName: string, args: unknown[]): BatchCall => ({
  to: token,
  value: '0',
  data: encodeFunctionData({ abi: tokenAbi(), functionName, args }),
})
const balanceOf = (who: Hex) =>
  client.readContract({
    address: token,
    abi: tokenAbi(),
    functionName: 'balanceOf',
    args: [who],
  }) as Promise<bigint>

/** An error answer's body. */
interface Refusal {
  error?: { code: string; message: string }
}

let n = 0
const email = () => `sponsor.${++n}.${Date.now()}@example.com`

describeBackends(
  'sponsored batches',
  (get) => {
    /** The operator API, as a deploy script calls it (no browser headers). */
    async function operator<T>(path: string, body?: unknown): Promise<Answer<T>> {
      const res = await get().api.request(`/api/v1/operator${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          authorization: `Bearer ${KEY}`,
          'content-type': 'application/json',
          'x-forwarded-for': '10.9.9.9',
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      })
      return { status: res.status, body: (await res.json()) as T, headers: res.headers }
    }

    interface Visitor {
      appId: string
      auth: TestSignIn
      key: PrivateKeyAccount
    }

    /** A signed-in user whose in-app wallet is a fresh key holding no ETH. */
    async function visitor(appId: string): Promise<Visitor> {
      const s = get()
      const auth = await s.emailLogin(appId, email())
      const key = privateKeyToAccount(generatePrivateKey())
      await linkInAppWallet(s.deps, appId, auth.user.id, {
        type: 'wallet',
        address: key.address,
        chainType: 'ethereum',
        chainId: 'eip155:1',
        walletClient: 'latch',
        walletClientType: 'latch',
        connectorType: 'embedded',
        recoveryMethod: 'latch',
      })
      return { appId, auth, key }
    }

    /** An app whose sponsor on the Prague chain pays for the token's approve and transfer. */
    async function sponsoredApp(fund = parseEther('1')) {
      const app = await get().newApp({
        rpcUrls: { [String(CHAIN_ID)]: anvil.url },
      })
      const made = await operator<{ address: Hex }>(`/apps/${app.id}/sponsors`, {
        chainId: CHAIN_ID,
      })
      expect(made.status, JSON.stringify(made.body)).toBe(201)
      const policy = await operator(`/apps/${app.id}/sponsors/${CHAIN_ID}/policy`, {
        contracts: {
          [token]: [
            toFunctionSelector('function approve(address,uint256)'),
            toFunctionSelector('function transfer(address,uint256)'),
          ],
        },
      })
      expect(policy.status, JSON.stringify(policy.body)).toBe(200)
      if (fund > 0n) {
        const hash = await funderWallet.sendTransaction({
          account: funder,
          chain: mainnet,
          to: made.body.address,
          value: fund,
        })
        await client.waitForTransactionReceipt({ hash })
      }
      return { appId: app.id, sponsor: made.body.address }
    }

    async function signBatch(
      v: Visitor,
      calls: BatchCall[],
      opts: { signer?: PrivateKeyAccount; nonce?: bigint } = {},
    ) {
      const nonce =
        opts.nonce ??
        ((await client.getCode({ address: v.key.address }))
          ? ((await client.readContract({
              address: v.key.address,
              abi: [
                {
                  type: 'function',
                  name: 'batchNonce',
                  stateMutability: 'view',
                  inputs: [],
                  outputs: [{ type: 'uint256' }],
                },
              ],
              functionName: 'batchNonce',
            })) as bigint)
          : 0n)
      const deadline = BigInt(Math.floor(Date.now() / 1000) + 600)
      const signature = await (opts.signer ?? v.key).signTypedData({
        domain: { ...BATCH_DOMAIN, chainId: CHAIN_ID, verifyingContract: v.key.address },
        types: BATCH_TYPES,
        primaryType: 'Batch',
        message: {
          calls: calls.map((c) => ({
            to: c.to as Hex,
            value: BigInt(c.value),
            data: c.data as Hex,
          })),
          nonce,
          deadline,
        },
      })
      return {
        chainId: CHAIN_ID,
        account: v.key.address,
        calls,
        nonce: nonce.toString(),
        deadline: Number(deadline),
        signature,
      }
    }

    async function authorization(v: Visitor, address: Hex = LATCH_DELEGATE_ADDRESS) {
      const a = await v.key.signAuthorization({
        chainId: CHAIN_ID,
        address,
        nonce: await client.getTransactionCount({ address: v.key.address }),
      })
      return {
        address: a.address,
        chainId: a.chainId,
        nonce: a.nonce,
        r: a.r,
        s: a.s,
        yParity: a.yParity ?? 0,
      }
    }

    /** The wallet frame's request: same-origin, with the session's wallet credential. */
    function send<T = { id: string } & Refusal>(v: Visitor, body: unknown, frame = true) {
      const s = get()
      const cookie = s.walletCookie(v.auth.token)
      return s.request<T>('/calls', {
        appId: v.appId,
        token: v.auth.token,
        body,
        headers: frame ? { 'sec-fetch-site': 'same-origin', ...(cookie ? { cookie } : {}) } : {},
      })
    }

    async function status(v: Visitor, id: string): Promise<Answer<CallsStatus>> {
      for (let i = 0; ; i++) {
        const res = await get().request<CallsStatus>(`/calls/${id}`, {
          method: 'GET',
          appId: v.appId,
          token: v.auth.token,
        })
        if (res.status !== 200 || res.body.status !== 100 || i > 50) return res
        await new Promise((r) => setTimeout(r, 50))
      }
    }

    const batches = () => get().deps.db.selectFrom('sponsored_batches').select('id').execute()

    test('a batch under the dapp’s own id answers that id and its status by it; the same id again, or an id Latch gave an earlier batch, is refused (calls_duplicate_id, 409) before anything is sent; another user may choose the same id', async () => {
      const { appId, sponsor } = await sponsoredApp()
      const recipient = privateKeyToAccount(generatePrivateKey()).address
      const mint = async (who: Hex) =>
        client.waitForTransactionReceipt({
          hash: await funderWallet.writeContract({
            account: funder,
            chain: mainnet,
            address: token,
            abi: tokenAbi(),
            functionName: 'mint',
            args: [who, 10n],
          }),
        })
      const transfer = () => [call('transfer', [recipient, 1n])]
      const v = await visitor(appId)
      await mint(v.key.address)
      const first = await send(v, {
        ...(await signBatch(v, transfer())),
        authorization: await authorization(v),
        id: '0xC0FFEE01',
      })
      expect(first.status, JSON.stringify(first.body)).toBe(200)
      expect(first.body.id).toBe('0xc0ffee01')
      expect((await status(v, '0xC0FFEE01')).body).toMatchObject({ id: '0xc0ffee01', status: 200 })

      const sponsorNonce = await client.getTransactionCount({ address: sponsor })
      const again = await send(v, { ...(await signBatch(v, transfer())), id: '0xc0ffee01' })
      expect(again.status).toBe(409)
      expect(again.body.error?.code).toBe('calls_duplicate_id')
      expect(await client.getTransactionCount({ address: sponsor })).toBe(sponsorNonce)

      const own = await send(v, await signBatch(v, transfer()))
      expect(own.status, JSON.stringify(own.body)).toBe(200)
      expect((await status(v, own.body.id)).body.status).toBe(200)
      const reused = await send(v, { ...(await signBatch(v, transfer())), id: own.body.id })
      expect(reused.body.error?.code).toBe('calls_duplicate_id')

      // The ids are each user's own: another user's equal id is a batch of theirs.
      const w = await visitor(appId)
      await mint(w.key.address)
      const theirs = await send(w, {
        ...(await signBatch(w, transfer())),
        authorization: await authorization(w),
        id: '0xc0ffee01',
      })
      expect(theirs.status, JSON.stringify(theirs.body)).toBe(200)
      expect((await status(w, '0xc0ffee01')).body.status).toBe(200)
      expect(await balanceOf(recipient)).toBe(3n)
      // A malformed id is refused before anything else.
      const bad = await send(v, { ...(await signBatch(v, transfer())), id: 'c0ffee' })
      expect(bad.status).toBe(400)
    })

    test('a visitor with 0 ETH approves and transfers in one batch; the sponsor pays', async () => {
      const { appId, sponsor } = await sponsoredApp()
      const v = await visitor(appId)
      const recipient = privateKeyToAccount(generatePrivateKey()).address
      await funderWallet.writeContract({
        account: funder,
        chain: mainnet,
        address: token,
        abi: tokenAbi(),
        functionName: 'mint',
        args: [v.key.address, 1000n],
      })
      expect(await client.getBalance({ address: v.key.address })).toBe(0n)
      const sponsorBefore = await client.getBalance({ address: sponsor })

      const hook = await operator(`/apps/${appId}/webhooks`, {
        url: 'https://hooks.example.com/latch',
        events: 'wallet.batch_sponsored',
      })
      expect(hook.status, JSON.stringify(hook.body)).toBe(201)
      const calls = [call('approve', [recipient, 50n]), call('transfer', [recipient, 100n])]
      const res = await send(v, {
        ...(await signBatch(v, calls)),
        authorization: await authorization(v),
      })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.id).toMatch(/^0x[0-9a-f]{64}$/)
      const delivery = await get()
        .deps.db.selectFrom('webhook_deliveries')
        .select(['event_type', 'payload'])
        .where('app_id', '=', appId)
        .executeTakeFirstOrThrow()
      expect(delivery.event_type).toBe('wallet.batch_sponsored')
      expect(JSON.parse(String(delivery.payload)).data).toMatchObject({
        id: res.body.id,
        userId: v.auth.user.id,
        chainId: CHAIN_ID,
        account: v.key.address,
        calls: 2,
        delegated: true,
      })

      const done = await status(v, res.body.id)
      expect(done.body).toMatchObject({
        version: '2.0.0',
        id: res.body.id,
        chainId: '0x1',
        status: 200,
        atomic: true,
      })
      expect(done.body.receipts?.[0]?.status).toBe('0x1')
      expect(await balanceOf(recipient)).toBe(100n)
      expect(await client.getBalance({ address: v.key.address })).toBe(0n)
      expect(await client.getBalance({ address: sponsor })).toBeLessThan(sponsorBefore)

      // Delegated now: the next batch needs no authorization.
      const nextBody = await signBatch(v, [call('transfer', [recipient, 1n])])
      const next = await send(v, nextBody)
      expect(next.status, JSON.stringify(next.body)).toBe(200)
      expect((await status(v, next.body.id)).body.status).toBe(200)
      expect(await balanceOf(recipient)).toBe(101n)
      // The same batch again: its nonce is spent, the simulation says so, nothing is sent.
      const replay = await send(v, nextBody)
      expect(replay.status).toBe(422)
      expect(replay.body.error?.message).toBe(
        'This batch of calls would fail: The batch nonce is not the account’s next',
      )
      expect(await balanceOf(recipient)).toBe(101n)

      // Another user reads nothing of it.
      const other = await visitor(appId)
      expect((await status(other, next.body.id)).status).toBe(404)

      const listed = await operator<{ sponsors: { chainId: number; spentTodayWei: string }[] }>(
        `/apps/${appId}/sponsors`,
      )
      expect(listed.body.sponsors[0]?.chainId).toBe(CHAIN_ID)
      expect(BigInt(listed.body.sponsors[0]?.spentTodayWei ?? '0')).toBeGreaterThan(0n)
    })

    test('refusals change nothing: outside the policy, another key, another delegate, a failing call, no wallet credential', async () => {
      const { appId, sponsor } = await sponsoredApp()
      const v = await visitor(appId)
      const recipient = privateKeyToAccount(generatePrivateKey()).address
      const before = {
        batches: (await batches()).length,
        nonce: await client.getTransactionCount({ address: sponsor }),
      }
      const auth = await authorization(v)

      const mint = await send(v, {
        ...(await signBatch(v, [call('mint', [v.key.address, 5n])])),
        authorization: auth,
      })
      expect(mint.status).toBe(403)
      expect(mint.body.error?.code).toBe('sponsor_policy_refused')
      expect(String(mint.body.error?.message)).toContain('Call 1 calls function 0x40c10f19')

      const elsewhere: BatchCall = { to: recipient, value: '0', data: '0x' }
      const plain = await send(v, { ...(await signBatch(v, [elsewhere])), authorization: auth })
      expect(plain.status).toBe(403)
      expect(String(plain.body.error?.message)).toContain('a contract the app does not pay for')

      const calls = [call('transfer', [recipient, 1n])]
      const forged = await send(v, {
        ...(await signBatch(v, calls, { signer: privateKeyToAccount(generatePrivateKey()) })),
        authorization: auth,
      })
      expect(forged.status).toBe(400)
      expect(forged.body.error?.code).toBe('batch_invalid')

      const evil = await send(v, {
        ...(await signBatch(v, calls)),
        authorization: await authorization(v, ANVIL_ACCOUNTS[2].address),
      })
      expect(evil.status).toBe(400)
      expect(evil.body.error?.code).toBe('delegation_refused')

      const expired = await send(v, {
        ...(await signBatch(v, calls)),
        deadline: Math.floor(Date.now() / 1000) - 1,
        authorization: auth,
      })
      expect(expired.status).toBe(400)
      expect(expired.body.error?.message).toBe(
        'The batch deadline is past or more than an hour ahead',
      )

      const noAuth = await send(v, await signBatch(v, calls))
      expect(noAuth.status).toBe(400)
      expect(String(noAuth.body.error?.message)).toContain('its authorization is needed')

      // The visitor holds no tokens: the transfer would revert, so nothing is sent.
      const failing = await send(v, { ...(await signBatch(v, calls)), authorization: auth })
      expect(failing.status).toBe(422)
      expect(failing.body.error?.code).toBe('batch_reverted')
      expect(failing.body.error?.message).toBe('This batch of calls would fail: Call 1 reverted')

      // The access token alone (the host page, the modal) is not the wallet frame.
      await funderWallet.writeContract({
        account: funder,
        chain: mainnet,
        address: token,
        abi: tokenAbi(),
        functionName: 'mint',
        args: [v.key.address, 10n],
      })
      const tokenOnly = await send(
        v,
        { ...(await signBatch(v, calls)), authorization: auth },
        false,
      )
      expect(tokenOnly.status).toBe(403)
      expect(tokenOnly.body.error?.code).toBe('origin_not_allowed')

      // Another user cannot have this wallet's batch paid for.
      const other = await visitor(appId)
      const stolen = await send(other, { ...(await signBatch(v, calls)), authorization: auth })
      expect(stolen.status).toBe(400)
      expect(String(stolen.body.error?.message)).toContain('not this user’s in-app wallet')

      expect((await batches()).length).toBe(before.batches)
      expect(await client.getTransactionCount({ address: sponsor })).toBe(before.nonce)
      expect(await client.getCode({ address: v.key.address })).toBeUndefined()
    })

    test('the budget runs out and says so; a sponsor without funds refuses', async () => {
      const { appId } = await sponsoredApp()
      const v = await visitor(appId)
      const recipient = privateKeyToAccount(generatePrivateKey()).address
      await funderWallet.writeContract({
        account: funder,
        chain: mainnet,
        address: token,
        abi: tokenAbi(),
        functionName: 'mint',
        args: [v.key.address, 10n],
      })
      const first = await send(v, {
        ...(await signBatch(v, [call('transfer', [recipient, 1n])])),
        authorization: await authorization(v),
      })
      expect(first.status, JSON.stringify(first.body)).toBe(200)
      await status(v, first.body.id)
      const spent = await operator<{ sponsors: { spentTodayWei: string }[] }>(
        `/apps/${appId}/sponsors`,
      )
      const used = spent.body.sponsors[0]?.spentTodayWei ?? '0'
      // Room for nothing more today for this user.
      await operator(`/apps/${appId}/sponsors/${CHAIN_ID}/policy`, { userDailyWei: used })
      const over = await send(v, await signBatch(v, [call('transfer', [recipient, 1n])]))
      expect(over.status).toBe(429)
      expect(over.body.error?.code).toBe('sponsor_budget_exhausted')
      expect(String(over.body.error?.message)).toContain('used up for today')
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0)

      // Per app: another user of the same app meets the app's budget.
      await operator(`/apps/${appId}/sponsors/${CHAIN_ID}/policy`, {
        userDailyWei: parseEther('1').toString(),
        appDailyWei: used,
      })
      const w = await visitor(appId)
      const appOver = await send(w, {
        ...(await signBatch(w, [call('approve', [recipient, 1n])])),
        authorization: await authorization(w),
      })
      expect(appOver.status).toBe(429)
      expect(appOver.body.error?.code).toBe('sponsor_budget_exhausted')

      const poor = await sponsoredApp(0n)
      const p = await visitor(poor.appId)
      const broke = await send(p, {
        ...(await signBatch(p, [call('approve', [recipient, 1n])])),
        authorization: await authorization(p),
      })
      expect(broke.status).toBe(503)
      expect(broke.body.error?.code).toBe('sponsor_out_of_funds')

      // Over the gas cap: refused before any budget is counted.
      await operator(`/apps/${appId}/sponsors/${CHAIN_ID}/policy`, {
        appDailyWei: parseEther('1').toString(),
        gasCapPerBatch: 30_000,
      })
      const heavy = await send(v, await signBatch(v, [call('transfer', [recipient, 1n])]))
      expect(heavy.status).toBe(403)
      expect(heavy.body.error?.code).toBe('sponsor_policy_refused')
      expect(String(heavy.body.error?.message)).toContain('over the app’s cap of 30000 per batch')

      // Each outcome is counted.
      const counted = await get().deps.metrics?.registry.getSingleMetricAsString(
        'latch_sponsored_batches_total',
      )
      expect(counted).toMatch(/latch_sponsored_batches_total\{outcome="success"\} [1-9]/)
      expect(counted).toMatch(
        /latch_sponsored_batches_total\{outcome="sponsor_budget_exhausted"\} [1-9]/,
      )
      expect(counted).toMatch(/latch_sponsored_batches_total\{outcome="sponsor_out_of_funds"\} 1/)
    })

    test('no sponsor on the chain, or a chain without the Prague rules: refused', async () => {
      const old = await startAnvil({ chainId: OLD_CHAIN_ID, hardfork: 'cancun' })
      try {
        const app = await get().newApp({
          rpcUrls: { [String(CHAIN_ID)]: anvil.url, [String(OLD_CHAIN_ID)]: old.url },
        })
        const v = await visitor(app.id)
        const body = await signBatch(v, [call('approve', [v.key.address, 1n])])
        const none = await send(v, body)
        expect(none.status).toBe(400)
        expect(none.body.error?.code).toBe('sponsor_unavailable')

        await operator(`/apps/${app.id}/sponsors`, { chainId: OLD_CHAIN_ID })
        await operator(`/apps/${app.id}/sponsors/${OLD_CHAIN_ID}/policy`, {
          contracts: { [token]: ['*'] },
        })
        const pre = await send(v, { ...body, chainId: OLD_CHAIN_ID })
        // The batch was signed for chain 1: a batch for the old chain signed for it is what
        // the frame would send; its signature check comes first, so sign again.
        expect(pre.status).toBe(400)
        const signed = await v.key.signTypedData({
          domain: { ...BATCH_DOMAIN, chainId: OLD_CHAIN_ID, verifyingContract: v.key.address },
          types: BATCH_TYPES,
          primaryType: 'Batch',
          message: {
            calls: body.calls.map((c) => ({ to: c.to as Hex, value: 0n, data: c.data as Hex })),
            nonce: 0n,
            deadline: BigInt(body.deadline),
          },
        })
        const prague = await send(v, { ...body, chainId: OLD_CHAIN_ID, signature: signed })
        expect(prague.status).toBe(400)
        expect(prague.body.error?.code).toBe('sponsor_unavailable')
        expect(String(prague.body.error?.message)).toContain('Prague')
      } finally {
        await old.stop()
      }
    })

    test('a node that does not answer: a clear 502, nothing written', async () => {
      const app = await get().newApp({ rpcUrls: { [String(CHAIN_ID)]: 'http://127.0.0.1:9' } })
      await operator(`/apps/${app.id}/sponsors`, { chainId: CHAIN_ID })
      await operator(`/apps/${app.id}/sponsors/${CHAIN_ID}/policy`, {
        contracts: { [token]: ['*'] },
      })
      const v = await visitor(app.id)
      const down = await send(
        v,
        await signBatch(v, [call('approve', [v.key.address, 1n])], { nonce: 0n }),
      )
      expect(down.status).toBe(502)
      expect(down.body.error?.code).toBe('rpc_internal')
      expect(String(down.body.error?.message)).toContain("The chain's node did not answer")
    })

    test('the operator API refuses a bad policy and an unknown chain', async () => {
      const app = await get().newApp()
      expect((await operator(`/apps/${app.id}/sponsors`, { chainId: 999_999_999 })).status).toBe(
        400,
      )
      await operator(`/apps/${app.id}/sponsors`, { chainId: CHAIN_ID })
      const again = await operator(`/apps/${app.id}/sponsors`, { chainId: CHAIN_ID })
      expect(again.status).toBe(409)
      const bad = await operator<Refusal>(`/apps/${app.id}/sponsors/${CHAIN_ID}/policy`, {
        contracts: { [token]: ['approve'] },
      })
      expect(bad.status).toBe(400)
      expect(bad.body.error?.message).toContain("'approve' is not a function selector")
      const cap = await operator<Refusal>(`/apps/${app.id}/sponsors/${CHAIN_ID}/policy`, {
        gasCapPerBatch: 10,
      })
      expect(cap.status).toBe(400)
    })
  },
  {
    LATCH_ADMIN_KEY: KEY,
    LATCH_METRICS: '1',
    LATCH_METRICS_TOKEN: 'metrics-token-metrics-token-0123456789',
  },
)
