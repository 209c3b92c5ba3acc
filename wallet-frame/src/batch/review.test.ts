// @vitest-environment node
/**
 * The batch review in Chromium: the built frame, the real API with the app's sponsor, anvil
 * under Prague rules. A new in-app wallet holding no ETH approves and transfers a token in one
 * batch: the frame draws every call decoded and who pays the fee, no script's click signs it,
 * the visitor's click does, and the sponsor's one type-4 transaction runs it. A batch outside
 * the policy is refused with its reason. Also: the frame's ERC-20 decoding against viem.
 */
import { ANVIL_ACCOUNTS, type RunningAnvil, startAnvil } from '@latch/server/testing'
import fc from 'fast-check'
import {
  type Abi,
  bytesToHex,
  createPublicClient,
  createWalletClient,
  decodeFunctionData,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  http,
  parseEther,
  toFunctionSelector,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { mainnet } from 'viem/chains'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { updateAppRecord } from '../../../server/src/apps/service.ts'
import { TEST_CONTRACTS } from '../../../server/src/sponsor/contracts/test/artifact.ts'
import { deployDelegate } from '../../../server/src/sponsor/deploy.ts'
import { createSponsor, updatePolicy } from '../../../server/src/sponsor/store.ts'
import { startWalletHarness, type WalletHarness } from '../test/harness.ts'
import { decodeErc20 } from './decode.ts'

vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 })

let h: WalletHarness
let anvil: RunningAnvil
let token: Hex
let tokenAbi: Abi
let client: ReturnType<typeof createPublicClient>
const funder = privateKeyToAccount(ANVIL_ACCOUNTS[0].privateKey)

beforeAll(async () => {
  ;[h, anvil] = await Promise.all([
    startWalletHarness(),
    startAnvil({ chainId: 1, hardfork: 'prague' }),
  ])
  const transport = http(anvil.url)
  client = createPublicClient({ chain: mainnet, transport })
  const wallet = createWalletClient({ account: funder, chain: mainnet, transport })
  await deployDelegate({ rpcUrl: anvil.url, chainId: 1, privateKey: ANVIL_ACCOUNTS[1].privateKey })
  const t = TEST_CONTRACTS.TestToken
  if (!t) throw new Error('no TestToken')
  tokenAbi = t.abi
  const deployed = await wallet.deployContract({ abi: t.abi, bytecode: t.bytecode })
  token = (await client.waitForTransactionReceipt({ hash: deployed })).contractAddress as Hex
  const deps = h.latch.deps
  await updateAppRecord(deps, h.appId, { rpcUrls: { '1': anvil.url } })
  const sponsor = await createSponsor(deps, h.appId, 1)
  await updatePolicy(deps, h.appId, 1, {
    contracts: {
      [token]: [
        toFunctionSelector('function approve(address,uint256)'),
        toFunctionSelector('function transfer(address,uint256)'),
      ],
    },
  })
  await client.waitForTransactionReceipt({
    hash: await wallet.sendTransaction({ to: sponsor.address, value: parseEther('1') }),
  })
})

afterAll(async () => {
  await h?.close()
  await anvil?.stop()
})

test('a wallet with 0 ETH approves and transfers in one batch on the visitor’s click; the app pays', async () => {
  const page = await h.browser.newPage()
  await h.open(page)
  const auth = await h.signIn(page, `batch.${Date.now()}@example.com`)
  const created = await h.call(page, 'latch:wallet:create', { accessToken: auth.token })
  const address = created.ok?.address as Hex
  expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/)
  const transport = http(anvil.url)
  const funderWallet = createWalletClient({ account: funder, chain: mainnet, transport })
  await client.waitForTransactionReceipt({
    hash: await funderWallet.writeContract({
      address: token,
      abi: tokenAbi,
      functionName: 'mint',
      args: [address, 1000n],
    }),
  })
  expect(await client.getBalance({ address })).toBe(0n)
  const spender = ANVIL_ACCOUNTS[2].address
  const recipient = privateKeyToAccount(bytesToHex(new Uint8Array(32).fill(7))).address
  const data = (functionName: 'approve' | 'transfer', who: Hex, amount: bigint) =>
    encodeFunctionData({ abi: erc20Abi, functionName, args: [who, amount] })

  // Outside the policy (a mint): refused with its reason once confirmed, nothing sent.
  const frame = page.frameLocator('#wallet')
  const button = frame.getByTestId('wallet-batch-confirm')
  const show = async (calls: { to: Hex; data: Hex }[]) => {
    // Hidden until its screen shows it, as the modal keeps the frame.
    await page.evaluate(() => {
      const iframe = document.getElementById('wallet') as HTMLIFrameElement
      iframe.style.cssText = 'display:none'
    })
    const answer = h.call(page, 'latch:wallet:send-calls', {
      address,
      accessToken: auth.token,
      chainId: 1,
      calls,
    })
    // A refusal before anything is drawn answers at once: fail with it rather than wait.
    const early = await Promise.race([
      answer,
      button.waitFor({ state: 'attached', timeout: 15_000 }).then(() => null),
    ])
    if (early) throw new Error(`the frame answered before drawing: ${JSON.stringify(early)}`)
    await page.evaluate(() => {
      const iframe = document.getElementById('wallet') as HTMLIFrameElement
      iframe.style.cssText = 'display:block;width:360px;height:640px;border:0'
    })
    await expect.poll(() => button.getAttribute('aria-disabled'), { timeout: 5000 }).toBeNull()
    // Wrapped: an async function returning the promise would wait for it.
    return { answer }
  }
  // A chain the app does not pay on: refused before anything is drawn.
  const base = await h.call(page, 'latch:wallet:send-calls', {
    address,
    accessToken: auth.token,
    chainId: 8453,
    calls: [{ to: token, data: data('approve', spender, 1n) }],
  })
  expect(base.error?.code).toBe('sponsor_unavailable')
  expect(await frame.getByTestId('wallet-batch').count()).toBe(0)

  const mint = encodeFunctionData({ abi: tokenAbi, functionName: 'mint', args: [address, 1n] })
  const refused = await show([{ to: token, data: mint }])
  await button.click()
  expect((await refused.answer).error?.code).toBe('sponsor_policy_refused')
  // The click asked the modal whether the request is open (it then holds closing): no arguments.
  const sendingNews = () =>
    page.evaluate(() => (window as unknown as { batchSending: string[] }).batchSending)
  expect(await sendingNews()).toEqual(['[]'])

  // The visitor closed the request as they clicked (the modal answers no), the modal cannot be
  // asked, or it does not answer within 5 s: nothing is signed or sent, the review goes, and the
  // answer says which.
  type Answer = boolean | 'throw' | 'hang' | 'hold'
  const answerAsModal = (answer: Answer) =>
    page.evaluate((a) => {
      ;(window as unknown as { batchSendingAnswer: Answer }).batchSendingAnswer = a
    }, answer)
  const unanswered = {
    code: 'embedded_wallet_error',
    message: 'The modal did not answer; nothing was sent',
  }
  for (const [answer, error] of [
    [false, { code: 'transaction_exited' }],
    ['throw', unanswered],
    ['hang', unanswered],
  ] as const) {
    await answerAsModal(answer)
    const closed = await show([{ to: token, data: data('transfer', recipient, 1n) }])
    await button.click()
    expect((await closed.answer).error).toMatchObject(error)
    expect(await frame.getByTestId('wallet-batch').count()).toBe(0)
  }
  // The modal takes the review away while the frame waits for its answer (the request ended):
  // a yes arriving after that signs nothing.
  await answerAsModal('hold')
  const taken = await show([{ to: token, data: data('transfer', recipient, 1n) }])
  await button.click()
  await expect
    .poll(() => page.evaluate(() => typeof (window as { releaseSending?: unknown }).releaseSending))
    .toBe('function')
  expect((await h.call(page, 'latch:wallet:dismiss-approval', undefined)).error).toBeUndefined()
  await page.evaluate(() => (window as unknown as { releaseSending(): void }).releaseSending())
  expect((await taken.answer).error).toMatchObject({ code: 'transaction_exited' })
  await answerAsModal(true)
  // Nothing signed reached the sponsor, whichever way the click ended.
  await new Promise((r) => setTimeout(r, 300))
  expect(await h.latch.deps.db.selectFrom('sponsored_batches').select('id').execute()).toEqual([])
  expect(await sendingNews()).toEqual(['[]', '[]', '[]', '[]', '[]'])

  const { answer } = await show([
    { to: token, data: data('approve', spender, 300n) },
    { to: token, data: data('transfer', recipient, 100n) },
  ])
  const calls = frame.getByTestId('wallet-batch-call')
  expect(await calls.count()).toBe(2)
  expect(await calls.nth(0).textContent()).toContain('approve')
  expect(await calls.nth(0).textContent()).toContain(spender)
  expect(await calls.nth(1).textContent()).toContain('transfer')
  expect(await calls.nth(1).textContent()).toContain('100 (token base units)')
  expect(await frame.getByTestId('wallet-batch-fee').textContent()).toMatch(
    /^Network fee: paid by .+/,
  )
  // A script's click is not the visitor's: nothing is signed or sent.
  await button.dispatchEvent('click')
  await new Promise((r) => setTimeout(r, 300))
  expect(await h.latch.deps.db.selectFrom('sponsored_batches').select('id').execute()).toEqual([])
  expect(await sendingNews()).toEqual(['[]', '[]', '[]', '[]', '[]'])
  await button.click()
  const ok = (await answer).ok as { id?: string } | undefined
  expect(ok?.id).toMatch(/^0x[0-9a-f]{64}$/)
  expect(await sendingNews()).toEqual(['[]', '[]', '[]', '[]', '[]', '[]'])
  await expect
    .poll(
      () =>
        client.readContract({
          address: token,
          abi: tokenAbi,
          functionName: 'balanceOf',
          args: [recipient],
        }),
      { timeout: 10_000 },
    )
    .toBe(100n)
  expect(
    await client.readContract({
      address: token,
      abi: tokenAbi,
      functionName: 'allowance',
      args: [address, spender],
    }),
  ).toBe(300n)
  expect(await client.getBalance({ address })).toBe(0n)
  await page.close()
})

describe('ERC-20 decoding against viem', () => {
  const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => bytesToHex(b) as Hex)
  const amount = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n })

  test('generated transfer, approve and transferFrom calldata decode as viem decodes them', () => {
    fc.assert(
      fc.property(address, address, amount, fc.constantFrom(0, 1, 2), (a, b, n, which) => {
        const data =
          which === 0
            ? encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [a, n] })
            : which === 1
              ? encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [a, n] })
              : encodeFunctionData({
                  abi: erc20Abi,
                  functionName: 'transferFrom',
                  args: [a, b, n],
                })
        const theirs = decodeFunctionData({ abi: erc20Abi, data })
        const ours = decodeErc20(data)
        expect(ours?.name).toBe(theirs.functionName)
        const args = theirs.args as readonly unknown[]
        if (ours?.name === 'transferFrom') expect([ours.from, ours.to, ours.amount]).toEqual(args)
        else if (ours?.name === 'approve') expect([ours.spender, ours.amount]).toEqual(args)
        else if (ours) expect([ours.to, ours.amount]).toEqual(args)
        // One byte more, or dirty address padding: not decoded (shown as raw calldata).
        expect(decodeErc20(`${data}00`)).toBeNull()
        expect(decodeErc20(`${data.slice(0, 10)}ff${data.slice(12)}`)).toBeNull()
      }),
      { numRuns: 200, seed: 38_003 },
    )
  })
})
