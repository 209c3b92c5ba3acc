/**
 * getEthereumProvider() on a real host page: ethers v6's BrowserProvider over the
 * in-app wallet's EIP-1193 provider signs a message through the sign screen (viem recovers the
 * wallet's address) and sends a transaction through the review screen that lands on a local
 * chain (anvil as chain 1, the app's RPC override, reached through the modal and the API's
 * chain proxy); the provider's chain switch, reads, events and codes in the page; the opt-in
 * EIP-6963 announcement; provider.js loaded only when asked for.
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { ANVIL_ACCOUNTS, type RunningAnvil, startAnvil } from '@latch/server/testing'
import type { WalletAccount } from '@latch/shared'
import type { Page } from 'playwright-core'
import { recoverMessageAddress } from 'viem'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { expectOk, newEmail, screen, settle, signInByEmail, visit } from './flows.ts'
import { type HostPage, WAIT_MS } from './harness.ts'
import { useHarness } from './use-harness.ts'
import { createWallet, walletCall } from './wallet-flows.ts'

const h = useHarness()
let anvil: RunningAnvil
beforeAll(async () => {
  anvil = await startAnvil({ chainId: 1 })
}, 60_000)
afterAll(async () => {
  await anvil?.stop()
})

// The browser build of ethers, next to its package.json (its exports map names no dist file).
const ETHERS_UMD = join(
  dirname(createRequire(import.meta.url).resolve('ethers')),
  '../dist/ethers.umd.min.js',
)
const SIGN = 'EMBEDDED_WALLET_SIGN_REQUEST_SCREEN'
const SEND = 'EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN'
const ETHER = 10n ** 18n
const RECIPIENT = ANVIL_ACCOUNTS[2].address

const chainApp = () =>
  h().createApp({
    embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: false },
    rpcUrls: { '1': anvil.url },
  })

/**
 * A signed-in visitor of `appId` with an in-app wallet; in a context of its own that outlives
 * the test when `kept` (closed with the file's harness), for the tests that share one.
 */
async function walletUser(
  appId: string,
  kept = false,
): Promise<{ hp: HostPage; wallet: WalletAccount }> {
  const hp = await h().open({ appId, kept })
  await signInByEmail(h(), hp, newEmail('provider'))
  const wallet = await createWallet(hp)
  await hp.page.waitForFunction(
    () => document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === false,
    undefined,
    { timeout: WAIT_MS },
  )
  return { hp, wallet }
}

let chainUser: Promise<{ hp: HostPage; wallet: WalletAccount }> | undefined
/**
 * The one visitor with an in-app wallet on the chain-1 app that the sign-and-send, announce and
 * logout tests share, in that order (the logout test last: it signs the visitor out). Each of
 * them needs a signed-in visitor with a wallet and its page, not a fresh one.
 */
const sharedWalletUser = () => {
  chainUser ??= chainApp().then((app) => walletUser(app.id, true))
  return chainUser
}

const balance = async (address: string) =>
  BigInt(await anvil.rpc<string>('eth_getBalance', [address, 'latest']))

/** Runs `body` in the page with `provider` (the in-app wallet's) and `ethers` in scope. */
function inPage<T>(
  page: Page,
  body: string,
): Promise<{ ok: T } | { error: { code?: number; message: string } }> {
  return page.evaluate(async (source) => {
    const w = window as unknown as Record<string, unknown>
    try {
      const run = new Function('provider', 'ethers', `return (async () => { ${source} })()`)
      return { ok: await run(w.latchProvider, w.ethers) }
    } catch (e) {
      const err = e as {
        code?: number
        message?: string
        info?: { error?: { code?: number; message?: string } }
      }
      return {
        error: {
          code: typeof err.code === 'number' ? err.code : err.info?.error?.code,
          message: String(err.info?.error?.message ?? err.message),
        },
      }
    }
  }, body)
}

/** Loads the provider into the page as `window.latchProvider` (and ethers, for the tests). */
async function loadProvider(page: Page, options = '{}'): Promise<void> {
  await page.addScriptTag({ path: ETHERS_UMD })
  await page.evaluate(async (o) => {
    const w = window as unknown as Record<string, unknown>
    w.latchProvider = await window.latch?.getEthereumProvider(JSON.parse(o))
  }, options)
}

test('behavior: ethers’ BrowserProvider over getEthereumProvider() signs a message (the sign screen; viem recovers the wallet) and sends 0.01 ETH (the review screen) that lands on anvil', async () => {
  const { hp, wallet } = await sharedWalletUser()
  const funding = await anvil.rpc<string>('eth_sendTransaction', [
    { from: ANVIL_ACCOUNTS[0].address, to: wallet.address, value: `0x${ETHER.toString(16)}` },
  ])
  expect((await anvil.receipt(funding)).status).toBe('0x1')
  // Nothing of the provider loaded until it is asked for. (The resource timings are read
  // through an observer: the page clock's `performance` lists no entries.)
  const loaded = () =>
    hp.page.evaluate(
      () =>
        new Promise<boolean>((resolve) => {
          new PerformanceObserver((list, observer) => {
            observer.disconnect()
            resolve(
              list.getEntries().some((r) => new URL(r.name).pathname.endsWith('/provider.js')),
            )
          }).observe({ type: 'resource', buffered: true })
        }),
    )
  expect(await loaded()).toBe(false)
  await loadProvider(hp.page)
  expect(await loaded()).toBe(true)

  const message = 'Hello from ethers on the host page'
  const signing = inPage<string>(
    hp.page,
    `const signer = await new ethers.BrowserProvider(provider).getSigner()
     if (signer.address.toLowerCase() !== '${wallet.address.toLowerCase()}') throw new Error('signer ' + signer.address)
     return signer.signMessage(${JSON.stringify(message)})`,
  )
  await visit(hp, SIGN)
  await screen(hp.modal, SIGN).getByRole('button', { name: 'Sign and continue' }).click()
  const signed = await signing
  if (!('ok' in signed)) throw new Error(`signMessage failed: ${JSON.stringify(signed)}`)
  expect(await recoverMessageAddress({ message, signature: signed.ok as `0x${string}` })).toBe(
    wallet.address,
  )

  const before = await balance(RECIPIENT)
  const sending = inPage<{ hash: string; status: number; from: string }>(
    hp.page,
    `const signer = await new ethers.BrowserProvider(provider).getSigner()
     const tx = await signer.sendTransaction({ to: '${RECIPIENT}', value: ethers.parseEther('0.01') })
     const receipt = await tx.wait()
     return { hash: tx.hash, status: receipt.status, from: receipt.from }`,
  )
  await visit(hp, SEND)
  const send = screen(hp.modal, SEND)
  const button = send.getByRole('button', { name: 'Send ETH' })
  await expect.poll(() => button.isEnabled(), { timeout: WAIT_MS }).toBe(true)
  await button.click()
  await send.getByRole('heading', { name: 'Transaction complete!' }).waitFor({ timeout: WAIT_MS })
  await send.getByRole('button', { name: 'All Done' }).click()
  const sent = await sending
  if (!('ok' in sent)) throw new Error(`sendTransaction failed: ${JSON.stringify(sent)}`)
  expect(sent.ok.status).toBe(1)
  expect(sent.ok.from.toLowerCase()).toBe(wallet.address.toLowerCase())
  const onChain = await anvil.rpc<{ status: string }>('eth_getTransactionReceipt', [sent.ok.hash])
  expect(onChain.status).toBe('0x1')
  expect(await balance(RECIPIENT)).toBe(before + ETHER / 100n)
})

test('behavior: announce is opt-in: getEthereumProvider({ announce: true }) answers eip6963:requestProvider with Latch, its rdns and a data:image icon, and the announced provider is the client’s one', async () => {
  const { hp, wallet } = await sharedWalletUser()
  const announced = await hp.page.evaluate(async () => {
    const seen: { name: string; rdns: string; icon: string; uuid: string; provider: unknown }[] = []
    window.addEventListener('eip6963:announceProvider', (e) => {
      const d = (e as CustomEvent).detail
      seen.push({ ...d.info, provider: d.provider })
    })
    window.dispatchEvent(new Event('eip6963:requestProvider'))
    const before = seen.length
    const plain = await window.latch?.getEthereumProvider()
    const quiet = seen.length
    const loud = await window.latch?.getEthereumProvider({ announce: true })
    window.dispatchEvent(new Event('eip6963:requestProvider'))
    const accounts = await (loud as { request(a: unknown): Promise<unknown> }).request({
      method: 'eth_accounts',
    })
    return {
      before,
      quiet,
      same: plain === loud && seen.every((s) => s.provider === loud),
      infos: seen.map(({ provider: _, ...info }) => info),
      accounts,
    }
  })
  expect(announced.before).toBe(0)
  expect(announced.quiet).toBe(0)
  expect(announced.same).toBe(true)
  expect(announced.infos).toHaveLength(2)
  for (const info of announced.infos) {
    expect(info).toMatchObject({ name: 'Latch', rdns: 'dev.latch.wallet' })
    expect(info.icon.startsWith('data:image/svg+xml,')).toBe(true)
  }
  expect(announced.accounts).toEqual([wallet.address])
})

test('behavior: in the page the provider answers accounts, chain id and reads from anvil, switches among supported chains with chainChanged, refuses with 4901 and 4200, and follows logout with accountsChanged [] and disconnect; eth_requestAccounts then opens the sign-in, whose close is 4001', async () => {
  const { hp, wallet } = await sharedWalletUser()
  await loadProvider(hp.page)
  const basics = await inPage<unknown[]>(
    hp.page,
    `const events = []
     window.providerEvents = events
     for (const name of ['accountsChanged', 'chainChanged', 'disconnect', 'connect'])
       provider.on(name, (p) => events.push([name, p && p.code !== undefined ? p.code : p]))
     return [
       await provider.request({ method: 'eth_accounts' }),
       await provider.request({ method: 'eth_chainId' }),
       typeof (await provider.request({ method: 'eth_blockNumber' })),
       await provider.request({ method: 'eth_getBalance', params: ['${wallet.address}', 'latest'] }),
     ]`,
  )
  // The balance anvil holds for the wallet (funded, then spent from, by the sign-and-send test).
  const held = await anvil.rpc<string>('eth_getBalance', [wallet.address, 'latest'])
  expect(BigInt(held)).toBeGreaterThan(0n)
  expect(basics).toEqual({ ok: [[wallet.address], '0x1', 'string', held] })
  expect(
    await inPage(
      hp.page,
      `return provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: '0x2a' }] })`,
    ),
  ).toEqual({ error: { code: 4901, message: 'Unsupported chainId' } })
  expect(
    await inPage(
      hp.page,
      `return provider.request({ method: 'eth_sendRawTransaction', params: ['0x00'] })`,
    ),
  ).toEqual({
    error: { code: 4200, message: 'The in-app wallet does not support eth_sendRawTransaction' },
  })
  expect(
    await inPage(
      hp.page,
      `await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: '0x89' }] }); return provider.request({ method: 'eth_chainId' })`,
    ),
  ).toEqual({ ok: '0x89' })
  // Back to chain 1, then sign out in the modal.
  await inPage(
    hp.page,
    `return provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: '0x1' }] })`,
  )
  expectOk(await settle(walletCall(hp.page, 'getUser')))
  await hp.page.evaluate(() => window.latch?.logout())
  await expect
    .poll(
      () =>
        hp.page.evaluate(() => (window as unknown as { providerEvents: unknown[] }).providerEvents),
      {
        timeout: WAIT_MS,
      },
    )
    .toEqual([
      ['chainChanged', '0x89'],
      ['chainChanged', '0x1'],
      ['accountsChanged', []],
      ['disconnect', 4900],
    ])
  expect(await inPage(hp.page, `return provider.request({ method: 'eth_accounts' })`)).toEqual({
    ok: [],
  })
  expect(
    await inPage(
      hp.page,
      `return provider.request({ method: 'personal_sign', params: ['0x00', '${wallet.address}'] })`,
    ),
  ).toMatchObject({ error: { code: 4100 } })
  const requesting = inPage(hp.page, `return provider.request({ method: 'eth_requestAccounts' })`)
  await visit(hp, 'LANDING')
  await hp.modal.getByTestId('close-button').click()
  expect(await requesting).toEqual({
    error: { code: 4001, message: 'User exited the modal before logging in' },
  })
})

test("behavior: an app on Base only (its chains setting; Base's node an anvil with chain id 8453, the app's RPC setting): the provider starts on Base, switches to it, refuses chain 1 with 4901 'Unsupported chainId', signs and sends there; latch.sendTransaction on chain 1 is refused before any screen", async () => {
  const base = await startAnvil({ chainId: 8453 })
  try {
    const app = await h().createApp({
      embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: false },
      chains: [8453],
      rpcUrls: { '8453': base.url },
    })
    expect(app.chains).toEqual([8453])
    const { hp, wallet } = await walletUser(app.id)
    const funding = await base.rpc<string>('eth_sendTransaction', [
      { from: ANVIL_ACCOUNTS[0].address, to: wallet.address, value: `0x${ETHER.toString(16)}` },
    ])
    expect((await base.receipt(funding)).status).toBe('0x1')
    await loadProvider(hp.page)
    expect(
      await inPage(
        hp.page,
        `const started = await provider.request({ method: 'eth_chainId' })
         const switched = await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: '0x2105' }] })
         return [started, switched, await provider.request({ method: 'eth_getBalance', params: ['${wallet.address}', 'latest'] })]`,
      ),
    ).toEqual({ ok: ['0x2105', null, `0x${ETHER.toString(16)}`] })
    // Chain 1 and Base Sepolia are chains Latch knows, but not this app's.
    for (const chainId of ['0x1', '0x14a34']) {
      expect(
        await inPage(
          hp.page,
          `return provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: '${chainId}' }] })`,
        ),
        chainId,
      ).toEqual({ error: { code: 4901, message: 'Unsupported chainId' } })
    }
    // The modal's side refuses too, whatever the page's provider says.
    expect(
      await hp.page.evaluate(() =>
        window.latch
          ?.sendTransaction({ to: '0x0000000000000000000000000000000000000001', chainId: 1 })
          .then(
            () => null,
            (e: { code?: string; message?: string }) => [e.code, e.message],
          ),
      ),
    ).toEqual(['unsupported_chain', 'Unsupported chainId'])

    const message = 'Signed on Base'
    const signing = inPage<string>(
      hp.page,
      `return (await new ethers.BrowserProvider(provider).getSigner()).signMessage(${JSON.stringify(message)})`,
    )
    await visit(hp, SIGN)
    await screen(hp.modal, SIGN).getByRole('button', { name: 'Sign and continue' }).click()
    const signed = await signing
    if (!('ok' in signed)) throw new Error(`signMessage failed: ${JSON.stringify(signed)}`)
    expect(await recoverMessageAddress({ message, signature: signed.ok as `0x${string}` })).toBe(
      wallet.address,
    )

    const sending = inPage<{ hash: string; status: number; chainId: string }>(
      hp.page,
      `const signer = await new ethers.BrowserProvider(provider).getSigner()
       const tx = await signer.sendTransaction({ to: '${RECIPIENT}', value: ethers.parseEther('0.01') })
       const receipt = await tx.wait()
       return { hash: tx.hash, status: receipt.status, chainId: String(tx.chainId) }`,
    )
    await visit(hp, SEND)
    const send = screen(hp.modal, SEND)
    const button = send.getByRole('button', { name: 'Send ETH' })
    await expect.poll(() => button.isEnabled(), { timeout: WAIT_MS }).toBe(true)
    await button.click()
    await send.getByRole('heading', { name: 'Transaction complete!' }).waitFor({ timeout: WAIT_MS })
    await send.getByRole('button', { name: 'All Done' }).click()
    const sent = await sending
    if (!('ok' in sent)) throw new Error(`sendTransaction failed: ${JSON.stringify(sent)}`)
    expect(sent.ok).toMatchObject({ status: 1, chainId: '8453' })
    const onBase = await base.rpc<{ chainId: string }>('eth_getTransactionByHash', [sent.ok.hash])
    expect(onBase.chainId).toBe('0x2105')
    // Landed on Base's node: the recipient's 10,000 ETH there grew by 0.01.
    expect(BigInt(await base.rpc<string>('eth_getBalance', [RECIPIENT, 'latest']))).toBe(
      10_000n * ETHER + ETHER / 100n,
    )
  } finally {
    await base.stop()
  }
})
