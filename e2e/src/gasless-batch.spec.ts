/**
 * Batches the app pays for, through the SDK in Chromium (docs/behaviour.md, "Batches the app pays
 * for"): anvil under Prague rules as chain 1 with Latch's delegate and a test token, the app's
 * sponsor funded and allowed the token's approve and transfer. A visitor whose new in-app wallet
 * holds 0 ETH calls `latch.sendCalls` with an approve and a transfer: the modal shows the wallet
 * frame's review, the visitor's click there sends it, the call resolves with the batch's id and
 * the provider's wallet_getCallsStatus reaches 200. A batch outside the policy is refused with its
 * reason, shown on screen, and closing rejects with it. Once the user's budget for the day is
 * spent, the next batch is refused before anything is sent, said in the visitor's language. On
 * one of the app's chains without a sponsor nothing opens: EIP-5792's 5760 or 5710.
 */
import { ANVIL_ACCOUNTS, type RunningAnvil, startAnvil } from '@latch/server/testing'
import type { Locator, Page } from 'playwright-core'
import {
  type Abi,
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  http,
  parseEther,
  toFunctionSelector,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { mainnet } from 'viem/chains'
import { afterAll, beforeAll, expect, test, vi } from 'vitest'
import { TEST_CONTRACTS } from '../../server/src/sponsor/contracts/test/artifact.ts'
import { deployDelegate } from '../../server/src/sponsor/deploy.ts'
import { createSponsor, findSponsor, updatePolicy } from '../../server/src/sponsor/store.ts'
import { expectAccessible } from './axe.ts'
import {
  expectRejected,
  newEmail,
  type Outcome,
  screen,
  settle,
  signInByEmail,
  visit,
} from './flows.ts'
import { type HostPage, WAIT_MS } from './harness.ts'
import { useHarness } from './use-harness.ts'
import { createWallet } from './wallet-flows.ts'

vi.setConfig({ testTimeout: 120_000 })

const h = useHarness()
let anvil: RunningAnvil
let token: Hex
let tokenAbi: Abi
let appId: string
const funder = privateKeyToAccount(ANVIL_ACCOUNTS[0].privateKey as Hex)

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 1, hardfork: 'prague' })
  const transport = http(anvil.url)
  const client = createPublicClient({ chain: mainnet, transport })
  const wallet = createWalletClient({ account: funder, chain: mainnet, transport })
  await deployDelegate({ rpcUrl: anvil.url, chainId: 1, privateKey: ANVIL_ACCOUNTS[1].privateKey })
  const t = TEST_CONTRACTS.TestToken
  if (!t) throw new Error('no TestToken')
  tokenAbi = t.abi
  const deployed = await wallet.deployContract({ abi: t.abi, bytecode: t.bytecode })
  token = (await client.waitForTransactionReceipt({ hash: deployed })).contractAddress as Hex
  const app = await h().createApp({
    embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: false },
    rpcUrls: { '1': anvil.url },
  })
  appId = app.id
  const deps = h().api.deps
  const sponsor = await createSponsor(deps, appId, 1)
  await updatePolicy(deps, appId, 1, {
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
}, 180_000)
afterAll(async () => {
  await anvil?.stop()
})

const SEND = 'EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN'

/** Runs `body` with `window.latch` in the page; answers how it settled. */
function inPage<T>(page: Page, body: string, arg: unknown): Promise<Outcome<T>> {
  return page.evaluate(
    async ([source, value]) => {
      try {
        const run = new Function('latch', 'arg', `return (async () => { ${source} })()`)
        return { ok: true as const, value: (await run(window.latch, value)) as T }
      } catch (e) {
        const err = (e ?? {}) as { code?: unknown; message?: unknown; name?: unknown }
        return {
          ok: false as const,
          error: {
            code: typeof err.code === 'string' ? err.code : null,
            message: typeof err.message === 'string' ? err.message : String(e),
            name: typeof err.name === 'string' ? err.name : null,
          },
        }
      }
    },
    [body, arg] as const,
  ) as Promise<Outcome<T>>
}

const sendCalls = (page: Page, request: unknown) =>
  inPage<{ id: string }>(page, 'return latch.sendCalls(arg)', request)

/** The wallet frame's confirm button inside the modal, once armed. */
async function armedConfirm(hp: HostPage, pending: Promise<unknown>): Promise<Locator> {
  // A refusal before anything shows answers at once: fail with it rather than wait.
  const early = await Promise.race([
    pending,
    // The send screen, checked by axe, with the frame's review over it.
    visit(hp, SEND).then(() => null),
  ])
  if (early) throw new Error(`answered before the review: ${JSON.stringify(early)}`)
  const button = hp.modal
    .frameLocator('[data-testid="latch-wallet-frame"]')
    .getByTestId('wallet-batch-confirm')
  await button.waitFor({ state: 'visible', timeout: WAIT_MS })
  // A long batch scrolls inside the frame, as the visitor would scroll it.
  await button.scrollIntoViewIfNeeded()
  await expect.poll(() => button.getAttribute('aria-disabled'), { timeout: WAIT_MS }).toBeNull()
  return button
}

/** The wallet frame's confirm button inside the modal, once armed, clicked by the visitor. */
async function confirmInFrame(
  hp: HostPage,
  pending: Promise<unknown>,
  beforeClick?: () => Promise<void>,
): Promise<void> {
  const button = await armedConfirm(hp, pending)
  await beforeClick?.()
  await button.click()
}

/**
 * The visitor presses Escape in the modal the moment its close button turns disabled (the
 * modal heard the click and holds its screen), before the sponsor can have answered. Resolves
 * whether that happened.
 */
async function escapeOnceHeld(hp: HostPage): Promise<() => Promise<boolean>> {
  await hp.modal.locator('body').evaluate((body) => {
    const doc = body.ownerDocument
    const w = doc.defaultView as Window & { escapedWhileHeld?: boolean }
    w.escapedWhileHeld = false
    const observer = new MutationObserver(() => {
      const close = doc.querySelector('[data-testid="close-button"]')
      if (!(close instanceof HTMLButtonElement) || !close.disabled) return
      observer.disconnect()
      w.escapedWhileHeld = true
      // Dispatched on the modal's document: the click left focus in the wallet frame.
      doc.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }))
    })
    observer.observe(doc.body, { subtree: true, childList: true, attributes: true })
  })
  return () =>
    hp.modal
      .locator('body')
      .evaluate(
        (body) =>
          (body.ownerDocument.defaultView as Window & { escapedWhileHeld?: boolean })
            .escapedWhileHeld === true,
      )
}

const data = (functionName: 'approve' | 'transfer', who: Hex, amount: bigint) =>
  encodeFunctionData({ abi: erc20Abi, functionName, args: [who, amount] })

test('behavior: a wallet with 0 ETH approves and transfers in one batch through the review; Escape once the click reached the modal is refused and sendCalls resolves with the id and wallet_getCallsStatus reaches 200; a batch outside the policy rejects with its reason', async () => {
  const hp = await h().open({ appId })
  await signInByEmail(h(), hp, newEmail('batch'))
  const { address } = await createWallet(hp)
  const transport = http(anvil.url)
  const client = createPublicClient({ chain: mainnet, transport })
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
  const spender = ANVIL_ACCOUNTS[2].address as Hex
  const recipient = privateKeyToAccount(`0x${'07'.repeat(32)}`).address

  const pending = sendCalls(hp.page, {
    version: '2.0.0',
    chainId: '0x1',
    from: address,
    atomicRequired: true,
    calls: [
      { to: token, data: data('approve', spender, 5n) },
      { to: token, data: data('transfer', recipient, 7n) },
    ],
    capabilities: { paymasterService: { url: 'https://unused.example' } },
    // The dapp's own id for the batch: the answer and the status use it.
    id: '0x5792C0FFEE',
  })
  // The click asks the modal first, which then holds its screen (the close button says so); the
  // visitor leaves at that moment, before the sponsor answered: the batch may be sent, so closing
  // is refused until the answer and the caller still hears its id, never a 4001. (A close that
  // crosses the click in flight is answered no and nothing is sent: the frame's review.test.ts.)
  let escaped: () => Promise<boolean> = async () => false
  await confirmInFrame(hp, pending, async () => {
    escaped = await escapeOnceHeld(hp)
  })
  const outcome = await settle(pending, 'sendCalls()')
  expect(await escaped()).toBe(true)
  if (!outcome.ok) throw new Error(`sendCalls rejected: ${JSON.stringify(outcome.error)}`)
  expect(outcome.value.id).toBe('0x5792c0ffee')
  const status = async () => {
    const answer = await inPage<{ status: number }>(
      hp.page,
      `const p = await latch.getEthereumProvider()
       return p.request({ method: 'wallet_getCallsStatus', params: [arg] })`,
      outcome.value.id,
    )
    return answer.ok ? answer.value.status : JSON.stringify(answer.error)
  }
  await expect.poll(status, { timeout: WAIT_MS }).toBe(200)
  const balanceOf = (who: Hex) =>
    client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [who] })
  expect(await balanceOf(recipient)).toBe(7n)
  expect(
    await client.readContract({
      address: token,
      abi: erc20Abi,
      functionName: 'allowance',
      args: [address, spender],
    }),
  ).toBe(5n)
  expect(await client.getBalance({ address })).toBe(0n)

  // Escape while the review has the focus (the frame's own document hears the key) closes the
  // request as Escape in the modal does: nothing is sent.
  const left = sendCalls(hp.page, {
    version: '2.0.0',
    chainId: '0x1',
    calls: [{ to: token, data: data('transfer', recipient, 1n) }],
  })
  await (await armedConfirm(hp, left)).focus()
  await hp.page.keyboard.press('Escape')
  expect(expectRejected(await settle(left, 'sendCalls() left')).code).toBe('transaction_exited')
  await screen(hp.modal, SEND).waitFor({ state: 'detached', timeout: WAIT_MS })
  expect(await balanceOf(recipient)).toBe(7n)

  // Outside the policy (a mint): the reason on screen, and closing rejects with it.
  const mint = encodeFunctionData({ abi: tokenAbi, functionName: 'mint', args: [address, 1n] })
  const refused = sendCalls(hp.page, {
    version: '2.0.0',
    chainId: '0x1',
    calls: [{ to: token, data: mint }],
  })
  await confirmInFrame(hp, refused)
  const error = hp.modal.getByTestId('batch-error')
  await error.waitFor({ state: 'visible', timeout: WAIT_MS })
  expect(await error.textContent()).toContain('which the app does not pay for')
  await hp.modal.getByTestId('close-button').click()
  const rejected = await settle(refused, 'sendCalls() refused')
  expect(rejected.ok).toBe(false)
  if (!rejected.ok) {
    expect(rejected.error.code).toBe('sponsor_policy_refused')
    expect(rejected.error.message).toContain('which the app does not pay for')
  }
})

test('error: the budget per user per day runs out: the next batch is refused before anything is sent, the modal says so in the visitor’s language (German here) and closing rejects with sponsor_budget_exhausted', async () => {
  const hp = await h().open({ appId, contextOptions: { locale: 'de-DE' } })
  await signInByEmail(h(), hp, newEmail('budget'))
  const { address } = await createWallet(hp)
  const account = address as Hex
  const transport = http(anvil.url)
  const client = createPublicClient({ chain: mainnet, transport })
  const funderWallet = createWalletClient({ account: funder, chain: mainnet, transport })
  await client.waitForTransactionReceipt({
    hash: await funderWallet.writeContract({
      address: token,
      abi: tokenAbi,
      functionName: 'mint',
      args: [account, 1000n],
    }),
  })
  const recipient = privateKeyToAccount(`0x${'0b'.repeat(32)}`).address
  const batch = {
    version: '2.0.0',
    chainId: '0x1',
    calls: [{ to: token, data: data('transfer', recipient, 3n) }],
  }
  // The first batch of the day goes through.
  const first = sendCalls(hp.page, batch)
  await confirmInFrame(hp, first)
  const sent = await settle(first, 'the first sendCalls()')
  if (!sent.ok) throw new Error(`the first batch was refused: ${JSON.stringify(sent.error)}`)
  // Without an id of the dapp's, Latch makes one.
  expect(sent.value.id).toMatch(/^0x[0-9a-f]{64}$/)

  // The user's budget for the day set just over what that batch cost: the next one would pass it.
  const deps = h().api.deps
  const spentRows = () =>
    deps.db
      .selectFrom('sponsored_batches')
      .select(['cost_wei'])
      .where('app_id', '=', appId)
      .where('account', '=', getAddress(account))
      .execute()
  const rows = await spentRows()
  expect(rows).toHaveLength(1)
  const spent = rows.reduce((sum, r) => sum + BigInt(r.cost_wei), 0n)
  const sponsor = await findSponsor(deps, appId, 1)
  if (!sponsor) throw new Error('no sponsor')
  const before = sponsor.policy.userDailyWei
  await updatePolicy(deps, appId, 1, { userDailyWei: (spent + 1n).toString() })
  try {
    const sponsorNonce = await client.getTransactionCount({ address: sponsor.address })
    const refused = sendCalls(hp.page, batch)
    await confirmInFrame(hp, refused)
    const error = hp.modal.getByTestId('batch-error')
    await error.waitFor({ state: 'visible', timeout: WAIT_MS })
    expect(await error.textContent()).toBe(
      'Das Budget dieser App für deine Netzwerkgebühren ist für heute aufgebraucht. Es wurde nichts gesendet; versuche es morgen erneut.',
    )
    await expectAccessible(hp.page, 'the batch refused for the budget, in German')
    await hp.modal.getByTestId('close-button').click()
    const rejected = await settle(refused, 'sendCalls() over the budget')
    expect(rejected.ok).toBe(false)
    if (!rejected.ok) {
      expect(rejected.error.code).toBe('sponsor_budget_exhausted')
      // The caller hears the server's English reason.
      expect(rejected.error.message).toBe(
        'This app’s budget for your network fees is used up for today',
      )
    }
    // Nothing was sent: no transaction from the sponsor, no batch recorded, the tokens unmoved.
    expect(await client.getTransactionCount({ address: sponsor.address })).toBe(sponsorNonce)
    expect(await spentRows()).toHaveLength(1)
    const balanceOf = (who: Hex) =>
      client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [who] })
    expect(await balanceOf(recipient)).toBe(3n)
    expect(await balanceOf(account)).toBe(997n)
  } finally {
    await updatePolicy(deps, appId, 1, { userDailyWei: before })
  }
})

test('refusal: on one of the app’s chains where it has no sponsor, the batch is refused before anything opens (5760 with atomicRequired, 5710 without) and wallet_getCapabilities says atomic batches are unsupported there', async () => {
  const hp = await h().open({ appId })
  await signInByEmail(h(), hp, newEmail('unpaid'))
  const { address } = await createWallet(hp)
  // The provider's rejection as a dapp sees it: EIP-5792's code, the message, the Latch code.
  const request = (atomicRequired: boolean) =>
    hp.page.evaluate(
      async (param) => {
        const latch = window.latch
        if (!latch) throw new Error('no window.latch')
        const p = await latch.getEthereumProvider()
        try {
          await p.request({ method: 'wallet_sendCalls', params: [param] })
          return null
        } catch (e) {
          const err = e as { code?: unknown; message?: unknown; data?: { latchCode?: unknown } }
          return { code: err.code, message: err.message, latchCode: err.data?.latchCode }
        }
      },
      {
        version: '2.0.0',
        chainId: '0xa',
        from: address,
        atomicRequired,
        calls: [{ to: token, data: data('transfer', address as Hex, 1n) }],
      },
    )
  const message =
    'This app does not pay network fees on chain 10, and the in-app wallet sends batches of calls only where the app pays them (wallet_getCapabilities lists those chains)'
  expect(await request(true)).toEqual({
    code: 5760,
    message,
    latchCode: 'calls_atomic_unsupported',
  })
  expect(await request(false)).toEqual({
    code: 5710,
    message,
    latchCode: 'calls_chain_unsupported',
  })
  expect(
    await hp.page.getByTestId('latch-dialog').evaluate((d) => (d as HTMLDialogElement).open),
  ).toBe(false)
  const capabilities = await inPage<Record<string, unknown>>(
    hp.page,
    `const p = await latch.getEthereumProvider()
     return p.request({ method: 'wallet_getCapabilities', params: [arg, ['0x1', '0xa']] })`,
    address,
  )
  expect(capabilities).toEqual({
    ok: true,
    value: {
      '0x1': { atomic: { status: 'supported' }, paymasterService: { supported: true } },
      '0xa': { atomic: { status: 'unsupported' } },
    },
  })
})
