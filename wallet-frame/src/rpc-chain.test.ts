// @vitest-environment node
/**
 * The built frame in Chromium against a real local chain: a wallet created in the frame,
 * funded from an anvil account, populates and signs a transfer through `latch:wallet:rpc`
 * (reads through the API's proxy on the frame's own origin), and the stand-in modal sends it
 * through the same proxy (CORS admits the modal origin); the receipt and both balances show it.
 */
import {
  type AuthResponse,
  CLIENT_NAME,
  chainClient,
  chainRpcPath,
  type Hex,
  proxyRpc,
} from '@latch/shared'
import { recoverMessageAddress, recoverTransactionAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, expect, test, vi } from 'vitest'
import { updateAppRecord } from '../../server/src/apps/service.ts'
import { ANVIL_ACCOUNTS, type RunningAnvil, startAnvil } from '../../server/src/testing/anvil.ts'
import { startWalletHarness, type WalletHarness } from './test/harness.ts'

vi.setConfig({ testTimeout: 90_000, hookTimeout: 180_000 })

let h: WalletHarness
let anvil: RunningAnvil
let auth: AuthResponse

beforeAll(async () => {
  ;[h, anvil] = await Promise.all([startWalletHarness(), startAnvil({ chainId: 1 })])
  await updateAppRecord(h.latch.deps, h.appId, { rpcUrls: { '1': anvil.url } })
})

afterAll(async () => {
  await h?.close()
  await anvil?.stop()
})

test('behavior: create, fund, populate and sign in the frame, send through the proxy, see the receipt and balances', async () => {
  const page = await h.browser.newPage()
  await h.open(page)
  auth = await h.signIn(page, `chain.${Date.now()}@example.com`)
  const created = await h.call(page, 'latch:wallet:create', { accessToken: auth.token })
  const address = created.ok?.address as Hex
  expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/)
  const rpc = async (method: string, params: unknown) => {
    const answer = (await h.call(page, 'latch:wallet:rpc', {
      address,
      accessToken: auth.token,
      request: { method, params },
    })) as { ok?: { response: unknown }; error?: { code: string; message: string } }
    if (!answer.ok) throw new Error(`${method}: ${JSON.stringify(answer.error)}`)
    return answer.ok.response
  }

  // Funded from an anvil account (signed outside Latch, sent straight to the node).
  const chain = chainClient(
    proxyRpc({
      apiUrl: h.apiOrigin,
      appId: h.appId,
      chainId: 1,
      accessToken: auth.token,
      clientName: CLIENT_NAME,
    }),
  )
  const funder = privateKeyToAccount(ANVIL_ACCOUNTS[0].privateKey)
  const fund = await funder.signTransaction({
    chainId: 1,
    to: address,
    value: 10n ** 18n,
    nonce: await chain.nonce(funder.address),
    gas: 21_000n,
    maxFeePerGas: 10n ** 10n,
    maxPriorityFeePerGas: 10n ** 9n,
  })
  await chain.waitForReceipt(await chain.sendRawTransaction(fund), {
    timeoutMs: 20_000,
    pollMs: 100,
  })
  expect(await chain.balance(address)).toBe(10n ** 18n)

  const signature = (await rpc('eth_sign', [address, 'Latch in-app wallet'])) as Hex
  expect(await recoverMessageAddress({ message: 'Latch in-app wallet', signature })).toBe(address)

  const to = ANVIL_ACCOUNTS[1].address
  const before = await chain.balance(to)
  const populated = (await rpc('eth_populateTransactionRequest', [
    { to, value: '0x2386f26fc10000' },
  ])) as Record<string, unknown>
  expect(populated).toMatchObject({ from: address, chainId: 1, type: 2, nonce: 0 })
  const signed = (await rpc('eth_signTransaction', [populated])) as Hex
  expect(await recoverTransactionAddress({ serializedTransaction: signed as never })).toBe(address)

  // The stand-in modal sends it through the proxy, cross-origin with its token.
  const sent = await page.evaluate(
    async ([url, token, app, raw]) => {
      const res = await fetch(url as string, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${token}`,
          'latch-app-id': app as string,
          'latch-client': 'latch-modal',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'eth_sendRawTransaction',
          params: [raw],
        }),
      })
      return { status: res.status, body: await res.json() }
    },
    [`${h.apiOrigin}${chainRpcPath(1)}`, auth.token, h.appId, signed] as const,
  )
  expect(sent.status).toBe(200)
  const hash = (sent.body as { result: Hex }).result
  expect(hash).toMatch(/^0x[0-9a-f]{64}$/)
  const receipt = await chain.waitForReceipt(hash, { timeoutMs: 20_000, pollMs: 100 })
  expect(receipt).toMatchObject({
    transactionHash: hash,
    status: 1,
    from: address.toLowerCase(),
    to: to.toLowerCase(),
    gasUsed: '21000',
  })
  expect(await chain.balance(to)).toBe(before + 10n ** 16n)
  const fee = BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice)
  expect(await chain.balance(address)).toBe(10n ** 18n - 10n ** 16n - fee)

  // Over the balance: the frame says insufficient_funds before anything is signed.
  const over = (await h.call(page, 'latch:wallet:rpc', {
    address,
    accessToken: auth.token,
    request: {
      method: 'eth_populateTransactionRequest',
      params: [{ to, value: '0x8ac7230489e80000' }],
    },
  })) as { error?: { code: string; message: string } }
  expect(over.error).toEqual({
    code: 'insufficient_funds',
    message: 'Insufficient funds for this transaction',
  })

  // Nothing the modal received names the node.
  const received = await page.evaluate(() => (window as unknown as { received: string[] }).received)
  expect(received.some((m) => m.includes(anvil.url))).toBe(false)
  await page.close()
})

test('error: a page of another origin cannot read the proxy, even with a token', async () => {
  const page = await h.browser.newPage()
  await page.goto(`${h.hostOrigin}/host?modal=about:blank`)
  const answer = await page.evaluate(
    async ([url, token, app]) =>
      fetch(url as string, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${token}`,
          'latch-app-id': app as string,
          'latch-client': 'latch-modal',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      }).then(
        (r) => `read ${r.status}`,
        (e: Error) => `refused: ${e.name}`,
      ),
    [`${h.apiOrigin}${chainRpcPath(1)}`, auth.token, h.appId] as const,
  )
  expect(answer).toBe('refused: TypeError')
  await page.close()
})
