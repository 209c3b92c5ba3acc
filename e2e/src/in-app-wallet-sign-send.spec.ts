/**
 * Signing and sending with the in-app wallet across three origins, against a real
 * local chain: anvil on a free port as chain 1, reached through the API's chain proxy (the
 * app's own RPC URL). One user's wallet serves the tests on one device, each setting its balance
 * on the chain first; its signatures are checked with viem; transfers land on the chain and move
 * both balances. No price source is set, so
 * the review shows no dollar line (the API answers 503) and no error.
 */
import { ANVIL_ACCOUNTS, type RunningAnvil, startAnvil } from '@latch/server/testing'
import type { Hex, TransactionReceipt, WalletAccount } from '@latch/shared'
import type { Page } from 'playwright-core'
import { recoverMessageAddress } from 'viem'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { expectModalAccessible } from './axe.ts'
import {
  type CallError,
  expectOk,
  expectRejected,
  newEmail,
  type Outcome,
  screen,
  settle,
  signInByEmail,
  visit,
} from './flows.ts'
import { type HostPage, WAIT_MS, waitReady } from './harness.ts'
import { useHarness } from './use-harness.ts'
import {
  createWallet,
  createWithPasscode,
  enterPasscode,
  SCREENS,
  sharedOnce,
} from './wallet-flows.ts'

const h = useHarness()
let anvil: RunningAnvil
beforeAll(async () => {
  anvil = await startAnvil({ chainId: 1 })
}, 60_000)
afterAll(async () => {
  await anvil?.stop()
})

const SIGN = 'EMBEDDED_WALLET_SIGN_REQUEST_SCREEN'
const SEND = 'EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN'
const ETHER = 10n ** 18n
const RECIPIENT = ANVIL_ACCOUNTS[1].address

/** An app whose chain 1 is this test's anvil (its own RPC URL, through the apps service). */
const chainApp = (requireUserPasswordOnCreate = false) =>
  h().createApp({
    embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate },
    rpcUrls: { '1': anvil.url },
  })

/** Calls signMessage or sendTransaction of `window.latch`; answers how it settled. */
function walletRequest<T>(
  page: Page,
  method: 'signMessage' | 'sendTransaction',
  ...args: unknown[]
): Promise<Outcome<T>> {
  return page
    .evaluate(
      async ([name, params]) => {
        try {
          const client = window.latch as unknown as Record<string, (...a: unknown[]) => unknown>
          return { ok: true as const, value: (await client[name]?.(...params)) as T }
        } catch (e) {
          const err = (e ?? {}) as { code?: unknown; message?: unknown; name?: unknown }
          const error: CallError = {
            code: typeof err.code === 'string' ? err.code : null,
            message: typeof err.message === 'string' ? err.message : String(e),
            name: typeof err.name === 'string' ? err.name : null,
          }
          return { ok: false as const, error }
        }
      },
      [method, args] as const,
    )
    .catch((e: unknown) => ({
      ok: false as const,
      error: { code: null, message: String(e), name: 'PlaywrightError' },
    })) as Promise<Outcome<T>>
}

/**
 * The user the first four tests share: signed in on a page of its own, with an in-app wallet
 * created without a passcode. Each test sets the wallet's balance it starts from and leaves the
 * dialog closed.
 */
const signer = sharedOnce(async (): Promise<{ hp: HostPage; wallet: WalletAccount }> => {
  const hp = await h().open({ appId: (await chainApp()).id, kept: true })
  await signInByEmail(h(), hp, newEmail('signer'))
  const wallet = await createWallet(hp)
  return { hp, wallet }
})

/** The shared user, its dialog closed (as the test before left it). */
async function walletUser(): Promise<{ hp: HostPage; wallet: WalletAccount }> {
  const user = await signer()
  await dialogOpen(user.hp.page, false)
  return user
}

const balance = async (address: string) =>
  BigInt(await anvil.rpc<string>('eth_getBalance', [address, 'latest']))

/** Sets the balance of `address` on the chain (whatever the tests before left there). */
async function fund(address: string, wei: bigint): Promise<void> {
  await anvil.rpc('anvil_setBalance', [address, `0x${wei.toString(16)}`])
  expect(await balance(address)).toBe(wei)
}

/** Waits until the host's dialog is open (or closed). */
const dialogOpen = (page: Page, open: boolean) =>
  page.waitForFunction(
    (want) =>
      document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === want,
    open,
    { timeout: WAIT_MS },
  )

test('behavior: signMessage shows the message in a 310px box that scrolls; the signature recovers to the wallet; Success, then the modal closes', async () => {
  const { hp, wallet } = await walletUser()
  const message = `Sign in to Latch e2e\n${'line of a long message\n'.repeat(40)}`
  const pending = walletRequest<Hex>(hp.page, 'signMessage', message, {
    description: 'Proves you own this wallet; costs nothing.',
  })
  await visit(hp, SIGN)
  const sign = screen(hp.modal, SIGN)
  await sign.getByRole('heading', { name: 'Sign message' }).waitFor()
  const box = sign.getByTestId('sign-message')
  expect(await box.inputValue()).toBe(message)
  // The signing address in full and the site asking: the host page's origin.
  expect((await sign.getByTestId('sign-address').textContent())?.toLowerCase()).toBe(
    wallet.address.toLowerCase(),
  )
  expect(await sign.getByTestId('request-site').textContent()).toBe(h().hostUrl)
  const size = await box.evaluate((el) => ({
    height: el.clientHeight,
    scroll: el.scrollHeight,
    max: getComputedStyle(el).maxHeight,
  }))
  expect(size.max).toBe('310px')
  expect(size.height).toBeLessThanOrEqual(310)
  expect(size.scroll).toBeGreaterThan(size.height)
  // Reachable by keyboard, and it scrolls from it.
  await box.focus()
  await box.press('End')
  await expect
    .poll(() => box.evaluate((el) => el.scrollTop), { timeout: WAIT_MS })
    .toBeGreaterThan(0)
  await sign.getByRole('button', { name: 'Sign and continue' }).click()
  const signature = expectOk(await settle(pending, 'signMessage()'))
  expect((await recoverMessageAddress({ message, signature })).toLowerCase()).toBe(
    wallet.address.toLowerCase(),
  )
  await sign.getByText('Success', { exact: true }).waitFor()
  await expectModalAccessible(hp.page, 'the sign screen after Success')
  await dialogOpen(hp.page, false)
})

test('behavior: sendTransaction of 0.01 ETH: the review, Send ETH, complete, All Done; the receipt and both balances on chain', async () => {
  const { hp, wallet } = await walletUser()
  await fund(wallet.address, ETHER)
  const before = await balance(RECIPIENT)
  const pending = walletRequest<TransactionReceipt>(hp.page, 'sendTransaction', {
    to: RECIPIENT,
    value: '0x2386f26fc10000',
    chainId: 1,
  })
  await visit(hp, SEND)
  const send = screen(hp.modal, SEND)
  await send.getByRole('heading', { name: 'Review transaction' }).waitFor()
  const button = send.getByRole('button', { name: 'Send ETH' })
  await expect.poll(() => button.isEnabled(), { timeout: WAIT_MS }).toBe(true)
  expect(await send.getByTestId('transaction-value').textContent()).toBe('0.01 ETH')
  expect(await send.getByTestId('transaction-balance').textContent()).toBe('1 ETH')
  const to = send.getByTestId('transaction-to').getByRole('link')
  expect(await to.textContent()).toBe(`${RECIPIENT.slice(0, 6)}…${RECIPIENT.slice(-4)}`)
  expect(await to.getAttribute('href')).toBe(`https://etherscan.io/address/${RECIPIENT}`)
  expect(await send.getByTestId('request-site').textContent()).toBe(h().hostUrl)
  expect(await send.getByTestId('transaction-fee').textContent()).toMatch(/^0\.\d+ ETH$/)
  // No price source configured: no dollar line, no error.
  expect(await send.getByTestId('transaction-value-usd').count()).toBe(0)
  expect(await send.getByRole('alert').count()).toBe(0)
  await button.click()
  await send.getByRole('heading', { name: 'Transaction complete!' }).waitFor()
  await send.getByText("You're all set.").waitFor()
  await visit(hp, SEND)
  const hashLink = send.getByTestId('transaction-hash').getByRole('link')
  const shownHash = await hashLink.textContent()
  const hashHref = await hashLink.getAttribute('href')
  await send.getByRole('button', { name: 'All Done' }).click()
  const receipt = expectOk(await settle(pending, 'sendTransaction()'))
  // The hash in full, linked to the chain's explorer.
  expect(shownHash).toBe(receipt.transactionHash)
  expect(hashHref).toBe(`https://etherscan.io/tx/${receipt.transactionHash}`)
  expect(receipt).toMatchObject({ status: 1, byzantium: true, type: 2, confirmations: 1 })
  expect(receipt.from.toLowerCase()).toBe(wallet.address.toLowerCase())
  expect(receipt.to?.toLowerCase()).toBe(RECIPIENT.toLowerCase())
  expect(receipt.transactionHash).toMatch(/^0x[0-9a-f]{64}$/)
  const onChain = await anvil.rpc<{ status: string; blockNumber: string }>(
    'eth_getTransactionReceipt',
    [receipt.transactionHash],
  )
  expect(Number(onChain.blockNumber)).toBe(receipt.blockNumber)
  expect(await balance(RECIPIENT)).toBe(before + ETHER / 100n)
  const gas = BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice)
  expect(await balance(wallet.address)).toBe(ETHER - ETHER / 100n - gas)
  await dialogOpen(hp.page, false)
})

test('error: a value over the balance shows the balance in red and insufficient funds; closing before submitting rejects with the spec text', async () => {
  const { hp, wallet } = await walletUser()
  await fund(wallet.address, ETHER / 1000n)
  const pending = walletRequest<TransactionReceipt>(hp.page, 'sendTransaction', {
    to: RECIPIENT,
    value: ETHER / 100n,
    chainId: 1,
  })
  await visit(hp, SEND)
  const send = screen(hp.modal, SEND)
  await send.getByRole('alert').getByText('Insufficient funds for this transaction').waitFor()
  const shown = send.getByTestId('transaction-balance').locator('span')
  expect(await shown.textContent()).toBe('0.001 ETH')
  expect(await shown.getAttribute('data-over')).toBe('true')
  // Red: the error colour at its readable text shade (axe checks the contrast).
  expect(await shown.evaluate((el) => getComputedStyle(el).color)).toBe('rgb(194, 81, 66)')
  await expectModalAccessible(hp.page, 'the send screen with insufficient funds')
  expect(await send.getByRole('button', { name: 'Send ETH' }).isDisabled()).toBe(true)
  await hp.modal.getByTestId('close-button').click()
  expect(expectRejected(await settle(pending)).message).toBe(
    'User exited the modal before submitting the transaction',
  )
  expect(await balance(wallet.address)).toBe(ETHER / 1000n)
})

test('behavior: while submitting, the close button, Escape in the modal and on the host page and the backdrop do not close; the receipt arrives once mined', async () => {
  const { hp, wallet } = await walletUser()
  await fund(wallet.address, ETHER)
  // Held in the pool until the test mines it, so the submitting state lasts.
  await anvil.rpc('evm_setAutomine', [false])
  try {
    const pending = walletRequest<TransactionReceipt>(hp.page, 'sendTransaction', {
      to: RECIPIENT,
      value: 1000n,
      chainId: 1,
    })
    await visit(hp, SEND)
    const send = screen(hp.modal, SEND)
    const button = send.getByRole('button', { name: 'Send ETH' })
    await expect.poll(() => button.isEnabled(), { timeout: WAIT_MS }).toBe(true)
    await button.click()
    await send.getByText('Submitting (may take a few minutes)...').waitFor()
    await expect
      .poll(() => anvil.rpc<{ pending: string }>('txpool_status').then((p) => Number(p.pending)), {
        timeout: WAIT_MS,
      })
      .toBe(1)
    const close = hp.modal.getByTestId('close-button')
    expect(await close.isDisabled()).toBe(true)
    await expectModalAccessible(hp.page, 'the send screen while submitting')
    await send.press('Escape')
    await hp.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur())
    await hp.page.keyboard.press('Escape')
    await hp.page.mouse.click(5, 5)
    // Each close attempt has reached the modal and been refused: still open, still submitting.
    await hp.page.evaluate(() => window.latch?.getUser())
    await dialogOpen(hp.page, true)
    await send.getByText('Submitting (may take a few minutes)...').waitFor()
    await anvil.rpc('evm_mine')
    await send.getByRole('heading', { name: 'Transaction complete!' }).waitFor({ timeout: WAIT_MS })
    // Complete: closing now delivers the receipt.
    await hp.modal.getByTestId('close-button').click()
    const receipt = expectOk(await settle(pending, 'sendTransaction()'))
    expect(receipt.status).toBe(1)
    await dialogOpen(hp.page, false)
  } finally {
    await anvil.rpc('evm_setAutomine', [true])
  }
})

test('behavior: a device without the share (cross-site, a reload) signs after passcode recovery', async () => {
  const app = await chainApp(true)
  const device = await h().open({ appId: app.id })
  await signInByEmail(h(), device, newEmail('device'))
  const wallet = await createWithPasscode(device, 'Sg2nD3')
  // Cross-site the frame keeps its share in memory only: reloaded, the page has none.
  await device.page.reload({ waitUntil: 'load' })
  await waitReady(device)
  const pending = walletRequest<Hex>(device.page, 'signMessage', 'from my new laptop')
  await visit(device, SCREENS.recovery)
  await enterPasscode(device.modal, 'Sg2nD3')
  await device.modal.getByRole('button', { name: 'Recover your account' }).click()
  await visit(device, SIGN)
  await screen(device.modal, SIGN).getByRole('button', { name: 'Sign and continue' }).click()
  const signature = expectOk(await settle(pending, 'signMessage()'))
  expect(
    (await recoverMessageAddress({ message: 'from my new laptop', signature })).toLowerCase(),
  ).toBe(wallet.address.toLowerCase())
})
