/**
 * The injected test wallet itself, as a page sees it: found by EIP-6963, its four behaviours,
 * and signatures that verify — an externally owned key's, and a smart-contract wallet's on a
 * local anvil chain (EIP-1271 deployed, EIP-6492 counterfactual). The sign-in specs rely on it.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type RunningAnvil, startAnvil } from '@latch/server/testing'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { createPublicClient, type Hex, http, verifyMessage } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import {
  counterfactualContractWallet,
  deployedContractWallet,
  deployWalletFactory,
} from './contract-wallet.ts'
import { launchChromium, WAIT_MS } from './harness.ts'
import { type InjectedWalletOptions, injectWallet } from './injected-wallet.ts'

const MESSAGE = 'localhost wants you to sign in with your Ethereum account'

let browser: Browser
let server: Server
let origin = ''
let anvil: RunningAnvil
let context: BrowserContext | undefined

beforeAll(async () => {
  ;[browser, anvil] = await Promise.all([launchChromium(), startAnvil()])
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>page</title>')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  origin = `http://localhost:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  await browser?.close()
  await anvil?.stop()
  await new Promise((resolve) => server?.close(resolve))
})

afterEach(async () => {
  await context?.close()
  context = undefined
})

async function open(options: InjectedWalletOptions = {}) {
  context = await browser.newContext()
  context.setDefaultTimeout(WAIT_MS)
  const wallet = await injectWallet(context, options)
  const page = await context.newPage()
  await page.goto(`${origin}/`)
  return { wallet, page }
}

type Outcome = { value: unknown } | { code: unknown; message: string }

/** Finds the wallet the way a dapp does (EIP-6963) and sends one request; answers how it settled. */
function request(page: Page, method: string, params?: unknown[]): Promise<Outcome> {
  return page.evaluate(
    async ({ method, params }) => {
      const found: {
        info: { name: string }
        provider: { request(a: unknown): Promise<unknown> }
      }[] = []
      window.addEventListener('eip6963:announceProvider', (e) =>
        found.push((e as CustomEvent).detail),
      )
      window.dispatchEvent(new Event('eip6963:requestProvider'))
      const provider = found[0]?.provider
      if (!provider) return { code: 'none', message: 'no wallet announced' }
      try {
        return { value: await provider.request({ method, params }) }
      } catch (e) {
        return { code: (e as { code?: unknown }).code, message: (e as Error).message }
      }
    },
    { method, params },
  )
}

describe('behaviours', () => {
  test('behavior: approve answers accounts and a signature that verifies for its key', async () => {
    const { page, wallet } = await open()
    expect(await request(page, 'eth_requestAccounts')).toEqual({ value: [wallet.address] })
    const signed = (await request(page, 'personal_sign', [MESSAGE, wallet.address])) as {
      value: Hex
    }
    expect(
      await verifyMessage({ address: wallet.address, message: MESSAGE, signature: signed.value }),
    ).toBe(true)
    expect(wallet.requests.map((r) => [r.method, r.origin])).toEqual([
      ['eth_requestAccounts', origin],
      ['personal_sign', origin],
    ])
  })

  test('error: reject (4001) and pending (-32002), per method or for all', async () => {
    const { page, wallet } = await open()
    wallet.behave('reject', 'personal_sign')
    expect(await request(page, 'eth_requestAccounts')).toEqual({ value: [wallet.address] })
    expect(await request(page, 'personal_sign', [MESSAGE, wallet.address])).toEqual({
      code: 4001,
      message: 'User rejected the request.',
    })
    wallet.behave('pending')
    expect(await request(page, 'eth_requestAccounts')).toEqual({
      code: -32002,
      message: `Request of type 'eth_requestAccounts' already pending for origin ${origin}. Please wait.`,
    })
  })

  test('behavior: hang never settles, while later requests do', async () => {
    const { page, wallet } = await open()
    wallet.behave('hang')
    await page.evaluate(() => {
      ;(window as unknown as { settled: boolean }).settled = false
      const found: { provider: { request(a: unknown): Promise<unknown> } }[] = []
      window.addEventListener('eip6963:announceProvider', (e) =>
        found.push((e as CustomEvent).detail),
      )
      window.dispatchEvent(new Event('eip6963:requestProvider'))
      found[0]?.provider.request({ method: 'eth_requestAccounts' }).finally(() => {
        ;(window as unknown as { settled: boolean }).settled = true
      })
    })
    await expect.poll(() => wallet.requests.length, { timeout: WAIT_MS }).toBe(1)
    wallet.behave('approve')
    expect(await request(page, 'eth_chainId')).toEqual({ value: '0x1' })
    expect(await page.evaluate(() => (window as unknown as { settled: boolean }).settled)).toBe(
      false,
    )
  })

  test('behavior: only the top page gets the wallet, also as window.ethereum when asked', async () => {
    const { page } = await open({ legacy: true, flags: { isMetaMask: true } })
    expect(
      await page.evaluate(
        () => (window as { ethereum?: { isMetaMask?: boolean } }).ethereum?.isMetaMask,
      ),
    ).toBe(true)
    await page.setContent(`<iframe src="${origin}/frame"></iframe>`)
    const frame = page.frames()[1]
    await frame?.waitForLoadState()
    expect(await frame?.evaluate(() => 'ethereum' in window)).toBe(false)
  })
})

describe('smart-contract wallets on anvil', () => {
  const client = () => createPublicClient({ transport: http(anvil.url) })

  async function signature(account: Parameters<typeof injectWallet>[1]) {
    const { page, wallet } = await open(account)
    const signed = (await request(page, 'personal_sign', [MESSAGE, wallet.address])) as {
      value: Hex
    }
    return { address: wallet.address, signature: signed.value }
  }

  test('behavior: a deployed EIP-1271 wallet signs with its owner key, and the signature verifies on chain', async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const account = await deployedContractWallet(anvil, owner)
    const { address, signature: sig } = await signature({ account })
    expect(address).toBe(account.address)
    expect(await client().verifyMessage({ address, message: MESSAGE, signature: sig })).toBe(true)
    // Signed by someone else than the owner: refused by the contract.
    const stranger = privateKeyToAccount(generatePrivateKey())
    const forged = await stranger.signMessage({ message: MESSAGE })
    expect(await client().verifyMessage({ address, message: MESSAGE, signature: forged })).toBe(
      false,
    )
  })

  test('behavior: a counterfactual EIP-6492 wallet signs before it exists, and the signature verifies', async () => {
    const factory = await deployWalletFactory(anvil)
    const owner = privateKeyToAccount(generatePrivateKey())
    const account = counterfactualContractWallet(factory, owner)
    expect(await anvil.rpc('eth_getCode', [account.address, 'latest'])).toBe('0x')
    const { address, signature: sig } = await signature({ account })
    expect(await client().verifyMessage({ address, message: MESSAGE, signature: sig })).toBe(true)
    const other = counterfactualContractWallet(factory, privateKeyToAccount(generatePrivateKey()))
    const { signature: wrong } = await signature({ account: { ...other, address } })
    expect(await client().verifyMessage({ address, message: MESSAGE, signature: wrong })).toBe(
      false,
    )
  })
})
