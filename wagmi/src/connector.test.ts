/**
 * The connector inside wagmi's own createConfig and actions, over the host SDK's real EIP-1193
 * provider (host-sdk/src/provider) on a real chain (anvil as chain 1). Only the modal is a
 * stand-in: its screens "approve" by signing with a viem account that anvil also unlocks, and
 * its chain reads go to anvil, as the API's chain proxy would. The real modal is driven in
 * e2e/src/examples.spec.ts. The `wagmi` project runs it on @wagmi/core 3, `wagmi-v2` on 2 (an alias
 * in vite.config.ts).
 */
import { ANVIL_ACCOUNTS, type RunningAnvil, startAnvil } from '@latch/server/testing'
import {
  type LatchClient,
  LatchError,
  type ModalMethods,
  type TransactionReceipt,
  type User,
} from '@latch/shared'
import * as core from '@wagmi/core'
import {
  connect,
  createConfig,
  createStorage,
  disconnect,
  getCallsStatus,
  getCapabilities,
  getConnectorClient,
  http,
  reconnect,
  sendCalls,
  sendTransaction,
  signMessage,
  signTypedData,
  switchChain,
  verifyMessage,
  verifyTypedData,
  version,
  waitForCallsStatus,
  waitForTransactionReceipt,
} from '@wagmi/core'
import { type Hex, isHex, parseEther } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { foundry, mainnet, optimism } from 'viem/chains'
import { afterAll, beforeAll, expect, test, vi } from 'vitest'
import { createProvider } from '../../host-sdk/src/provider/provider.ts'
import { latch } from './index.ts'

/** wagmi 3's name for wagmi 2's getAccount (which 3 keeps, deprecated). */
const getConnection: typeof core.getConnection =
  (core as { getConnection?: typeof core.getConnection }).getConnection ?? core.getAccount

let anvil: RunningAnvil
beforeAll(async () => {
  anvil = await startAnvil({ chainId: 1 })
}, 60_000)
afterAll(async () => {
  await anvil?.stop()
})

const KEY = ANVIL_ACCOUNTS[0].privateKey as Hex
const account = privateKeyToAccount(KEY)
const RECIPIENT = ANVIL_ACCOUNTS[2].address as Hex

const userWithWallet = (): User => ({
  id: 'user-1',
  createdAt: '2026-01-01T00:00:00.000Z',
  linkedAccounts: [
    {
      type: 'wallet',
      address: account.address,
      chainType: 'ethereum',
      chainId: 'eip155:1',
      walletClient: 'latch',
      walletClientType: 'latch',
      connectorType: 'embedded',
      recoveryMethod: 'latch',
      verifiedAt: '2026-01-01T00:00:00.000Z',
    },
  ],
})

/** The sponsor's capabilities on chain 1, as the API answers them. */
const CAPABILITIES = {
  '0x1': { atomic: { status: 'supported' }, paymasterService: { supported: true } },
}

/** What the modal sent for each batch id (modal-app/src/wallet/calls.ts answers the real ones). */
const sentBatches = new Map<string, { params: unknown; hashes: Hex[] }>()

/**
 * The modal's EIP-5792 as the stand-in answers it: a batch the review "approved" is sent call by
 * call from the anvil-unlocked account (the app's sponsor and the delegate are the server's
 * tests and the e2e spec's), its id a hash of the first transaction.
 */
async function batches(method: string, params: unknown[]): Promise<unknown> {
  if (method === 'wallet_getCapabilities') return CAPABILITIES
  if (method === 'wallet_sendCalls') {
    const { calls } = params[0] as { calls: { to: Hex; value?: Hex; data?: Hex }[] }
    const hashes: Hex[] = []
    for (const call of calls) {
      const hash = await anvil.rpc<Hex>('eth_sendTransaction', [{ from: account.address, ...call }])
      hashes.push(hash)
      await anvil.receipt(hash)
    }
    const id = `0x${(hashes[0] ?? '').slice(2).padStart(64, '0')}`
    sentBatches.set(id, { params: params[0], hashes })
    return { id }
  }
  if (method === 'wallet_getCallsStatus') {
    const batch = sentBatches.get(params[0] as string)
    if (!batch) throw LatchError.of('not_found')
    const receipts = await Promise.all(
      batch.hashes.map((h) => anvil.rpc<Record<string, unknown>>('eth_getTransactionReceipt', [h])),
    )
    return { version: '2.0.0', id: params[0], chainId: '0x1', status: 200, atomic: true, receipts }
  }
  if (method === 'wallet_showCallsStatus') return null
  throw LatchError.of('rpc_unsupported_method')
}

/** A client whose modal approves every screen; `signedIn` says whether a session exists. */
function standInClient(signedIn: boolean) {
  let user: User | null = signedIn ? userWithWallet() : null
  const handlers = new Map<string, Set<(p: unknown) => void>>()
  const emit = (event: string, payload: unknown) => {
    for (const h of handlers.get(event) ?? []) h(payload)
  }
  const setUser = (next: User | null) => {
    user = next
    emit('user', next)
  }
  const modal = {
    signMessage: async (message: string) =>
      account.signMessage({ message: isHex(message) ? { raw: message } : message }),
    signTypedData: async (typedData: unknown) =>
      account.signTypedData(
        JSON.parse(typeof typedData === 'string' ? typedData : JSON.stringify(typedData)),
      ),
    sendTransaction: async (request: { to?: string; value?: unknown; data?: string }) => {
      const hash = await anvil.rpc<Hex>('eth_sendTransaction', [
        {
          from: account.address,
          to: request.to,
          value:
            request.value === undefined
              ? undefined
              : `0x${BigInt(request.value as string).toString(16)}`,
          data: request.data,
        },
      ])
      await anvil.receipt(hash)
      return { transactionHash: hash } as unknown as TransactionReceipt
    },
    rpc: (_chainId: number, method: string, params?: unknown) =>
      method.startsWith('wallet_')
        ? batches(method, (params ?? []) as unknown[])
        : anvil.rpc(method, (params ?? []) as unknown[]),
  } as unknown as ModalMethods
  const run = <T>(fn: (m: ModalMethods) => Promise<T>) => fn(modal)
  const login = vi.fn(async () => {
    setUser(userWithWallet())
    return { user: user as User, isNewUser: false }
  })
  const logout = vi.fn(async () => setUser(null))
  let provider: ReturnType<typeof createProvider> | undefined
  const client = {
    ready: Promise.resolve(),
    on: (event: string, handler: (p: unknown) => void) => {
      handlers.set(event, (handlers.get(event) ?? new Set()).add(handler))
    },
    off: (event: string, handler: (p: unknown) => void) => handlers.get(event)?.delete(handler),
    getUser: async () => user,
    login,
    logout,
    getEthereumProvider: async () => {
      provider ??= createProvider(client, run, run)
      return provider
    },
  } as unknown as LatchClient
  return { client, login, logout, setUser }
}

function wagmiConfig(client: LatchClient, mode: 'logout' | 'local' = 'logout') {
  const memory = new Map<string, string>()
  return createConfig({
    chains: [mainnet, optimism, foundry],
    connectors: [latch({ client, disconnect: mode })],
    transports: { [mainnet.id]: http(anvil.url), [optimism.id]: http(), [foundry.id]: http() },
    storage: createStorage({
      storage: {
        getItem: (k) => memory.get(k) ?? null,
        setItem: (k, v) => void memory.set(k, v),
        removeItem: (k) => void memory.delete(k),
      },
    }),
  })
}

function first(config: ReturnType<typeof wagmiConfig>) {
  const [connector] = config.connectors
  if (!connector) throw new Error('no connector')
  return connector
}

test('behavior: connect signs in when needed; wagmi’s signMessage, signTypedData and sendTransaction go through the provider, verifyMessage and verifyTypedData accept the signatures and waitForTransactionReceipt sees the receipt', async () => {
  const { client, login } = standInClient(false)
  const config = wagmiConfig(client)
  const [connector] = config.connectors
  if (!connector) throw new Error('no connector')
  expect(connector).toMatchObject({
    id: 'latch',
    name: 'Latch',
    type: 'latch',
    rdns: 'dev.latch.wallet',
  })
  const connected = await connect(config, { connector })
  expect(login).toHaveBeenCalledTimes(1)
  expect(connected).toEqual({ accounts: [account.address], chainId: 1 })
  expect(getConnection(config)).toMatchObject({ status: 'connected', address: account.address })

  const message = 'Hello from wagmi'
  const signature = await signMessage(config, { message })
  expect(await verifyMessage(config, { address: account.address, message, signature })).toBe(true)

  const typed = {
    domain: { name: 'Latch test', version: '1', chainId: 1 },
    types: { Mail: [{ name: 'contents', type: 'string' }] },
    primaryType: 'Mail',
    message: { contents: 'typed hello' },
  } as const
  const typedSignature = await signTypedData(config, typed)
  expect(
    await verifyTypedData(config, {
      ...typed,
      address: account.address,
      signature: typedSignature,
    }),
  ).toBe(true)

  const before = BigInt(await anvil.rpc<string>('eth_getBalance', [RECIPIENT, 'latest']))
  const hash = await sendTransaction(config, { to: RECIPIENT, value: parseEther('0.01') })
  const receipt = await waitForTransactionReceipt(config, { hash })
  expect(receipt.status).toBe('success')
  expect(receipt.from.toLowerCase()).toBe(account.address.toLowerCase())
  const after = BigInt(await anvil.rpc<string>('eth_getBalance', [RECIPIENT, 'latest']))
  expect(after - before).toBe(parseEther('0.01'))
})

test('behavior: wagmi’s getCapabilities, sendCalls, getCallsStatus and waitForCallsStatus reach the modal through the provider unfiltered (wallet_sendCalls with the calls and paymasterService), and the status reaches success', async () => {
  const { client } = standInClient(true)
  const config = wagmiConfig(client)
  await connect(config, { connector: first(config), chainId: mainnet.id })
  const capabilities = await getCapabilities(config, { chainId: mainnet.id })
  expect(capabilities).toMatchObject({
    atomic: { status: 'supported' },
    paymasterService: { supported: true },
  })
  const { id } = await sendCalls(config, {
    chainId: mainnet.id,
    calls: [
      { to: RECIPIENT, value: parseEther('0.001') },
      { to: RECIPIENT, value: parseEther('0.002') },
    ],
    capabilities: { paymasterService: { url: 'https://app.example/paymaster' } },
  })
  expect(id).toMatch(/^0x[0-9a-f]{64}$/)
  expect(sentBatches.get(id)?.params).toMatchObject({
    version: '2.0.0',
    chainId: '0x1',
    from: account.address,
    calls: [
      { to: RECIPIENT, value: '0x38d7ea4c68000' },
      { to: RECIPIENT, value: '0x71afd498d0000' },
    ],
    capabilities: { paymasterService: { url: 'https://app.example/paymaster' } },
  })
  const status = await getCallsStatus(config, { id })
  expect(status).toMatchObject({ status: 'success', atomic: true })
  expect(status.receipts).toHaveLength(2)
  await expect(waitForCallsStatus(config, { id, timeout: 5000 })).resolves.toMatchObject({
    status: 'success',
  })
  await disconnect(config)
})

test('behavior: the @wagmi/core under test is the major its project names (WAGMI_CORE_MAJOR)', () => {
  expect(process.env.WAGMI_CORE_MAJOR).toMatch(/^[23]$/)
  expect(version.split('.')[0]).toBe(process.env.WAGMI_CORE_MAJOR)
})

test('behavior: connect withCapabilities answers each account as { address, capabilities } (none granted at connect), and wagmi’s state keeps the address', async () => {
  const config = wagmiConfig(standInClient(true).client)
  expect(await first(config).connect({ withCapabilities: true })).toEqual({
    accounts: [{ address: account.address, capabilities: {} }],
    chainId: 1,
  })
  const other = wagmiConfig(standInClient(true).client)
  expect(await connect(other, { connector: first(other), withCapabilities: true })).toEqual({
    accounts: [{ address: account.address, capabilities: {} }],
    chainId: 1,
  })
  expect(getConnection(other)).toMatchObject({ status: 'connected', address: account.address })
})

test('behavior: a signed-in visitor connects without the sign-in; closing the sign-in is wagmi’s UserRejectedRequestError (4001)', async () => {
  const signedIn = standInClient(true)
  await connect(wagmiConfig(signedIn.client), {
    connector: first(wagmiConfig(signedIn.client)),
  })
  expect(signedIn.login).not.toHaveBeenCalled()

  const closing = standInClient(false)
  closing.login.mockRejectedValueOnce(LatchError.of('login_exited'))
  const config = wagmiConfig(closing.client)
  const error = await connect(config, { connector: first(config) }).catch((e: unknown) => e)
  expect(error).toMatchObject({ name: 'UserRejectedRequestError', code: 4001 })
  expect(getConnection(config).status).toBe('disconnected')
})

test('behavior: switchChain moves among the app’s chains (wagmi hears chainChanged); a chain the config lacks or the wallet does not support is refused', async () => {
  const { client } = standInClient(true)
  const config = wagmiConfig(client)
  await connect(config, { connector: first(config) })
  await switchChain(config, { chainId: optimism.id })
  expect(getConnection(config).chainId).toBe(optimism.id)
  const provider = await client.getEthereumProvider()
  expect(await provider.request({ method: 'eth_chainId' })).toBe('0xa')
  // Foundry's 31337 is in the config but not among Latch's chains: the provider's 4901.
  await expect(switchChain(config, { chainId: foundry.id })).rejects.toMatchObject({
    name: 'SwitchChainError',
  })
  // Polygon is a Latch chain but not this app's: the connector refuses before asking the wallet.
  await expect(first(config).switchChain?.({ chainId: 137 })).rejects.toMatchObject({
    name: 'SwitchChainError',
    cause: { name: 'ChainNotConfiguredError' },
  })
  expect(getConnection(config).chainId).toBe(optimism.id)
  // connect on a chain asked for switches there.
  const other = wagmiConfig(standInClient(true).client)
  expect(await connect(other, { connector: first(other), chainId: optimism.id })).toMatchObject({
    chainId: optimism.id,
  })
})

test('behavior: a sign-out elsewhere disconnects wagmi (accountsChanged [] / disconnect), a sign-in elsewhere connects it (connect), and an account change reaches wagmi', async () => {
  const { client, setUser } = standInClient(false)
  const config = wagmiConfig(client)
  // createConfig ran setup; let it reach the provider.
  await vi.waitFor(async () => expect(await config.connectors[0]?.getProvider()).toBeDefined())
  await client.login()
  await vi.waitFor(() => expect(getConnection(config).status).toBe('connected'))
  expect(getConnection(config).address).toBe(account.address)

  const other = privateKeyToAccount(ANVIL_ACCOUNTS[1].privateKey as Hex)
  const user = userWithWallet()
  setUser({
    ...user,
    linkedAccounts: user.linkedAccounts.map((a) => ({ ...a, address: other.address })),
  })
  await vi.waitFor(() => expect(getConnection(config).address).toBe(other.address))

  setUser(null)
  await vi.waitFor(() => expect(getConnection(config).status).toBe('disconnected'))
})

test('behavior: disconnect "logout" signs the user out; "local" keeps the session, and the next page’s reconnect does not connect until connect is asked again', async () => {
  const out = standInClient(true)
  const config = wagmiConfig(out.client)
  await connect(config, { connector: first(config) })
  await disconnect(config)
  expect(out.logout).toHaveBeenCalledTimes(1)
  expect(getConnection(config).status).toBe('disconnected')

  const local = standInClient(true)
  const localConfig = wagmiConfig(local.client, 'local')
  const connector = localConfig.connectors[0]
  if (!connector) throw new Error('no connector')
  await connect(localConfig, { connector })
  await disconnect(localConfig)
  expect(local.logout).not.toHaveBeenCalled()
  expect(await connector.isAuthorized()).toBe(false)
  await reconnect(localConfig)
  expect(getConnection(localConfig).status).toBe('disconnected')
  await connect(localConfig, { connector })
  expect(local.login).not.toHaveBeenCalled()
  expect(await connector.isAuthorized()).toBe(true)
  expect((await getConnectorClient(localConfig)).account.address).toBe(account.address)
})

test('behavior: a provider that cannot load (the modal unreachable) fails connect, not the page: setup swallows it and the next connect asks again', async () => {
  const { client } = standInClient(true)
  const load = client.getEthereumProvider
  const unreachable = LatchError.of('modal_unreachable')
  client.getEthereumProvider = vi.fn(() => Promise.reject(unreachable))
  // createConfig runs setup; an unhandled rejection there would fail this file.
  const config = wagmiConfig(client)
  await expect(connect(config, { connector: first(config) })).rejects.toBe(unreachable)
  client.getEthereumProvider = load
  expect(await connect(config, { connector: first(config) })).toMatchObject({
    accounts: [account.address],
  })
})
