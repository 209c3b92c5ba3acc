// @vitest-environment jsdom
/**
 * EIP-6963: a page that announces the in-app wallet (`getEthereumProvider({ announce: true })`)
 * gets it listed by wagmi's injected-wallet discovery, which an app with only injected
 * connectors relies on, and connected through wagmi's own injected connector; beside latch() it
 * is listed once, since both name the rdns 'dev.latch.wallet'. The provider is the host SDK's
 * real one over a stand-in client.
 */
import type { LatchClient, User } from '@latch/shared'
import { connect, createConfig, http } from '@wagmi/core'
import { mainnet } from 'viem/chains'
import { expect, test, vi } from 'vitest'
import { announce, createProvider } from '../../host-sdk/src/provider/provider.ts'
import { latch } from './index.ts'

const ADDRESS = '0x1111111111111111111111111111111111111111'

function standInClient() {
  let user: User | null = null
  const handlers = new Set<(u: User | null) => void>()
  const client = {
    ready: Promise.resolve(),
    on: (event: string, h: (u: User | null) => void) => event === 'user' && handlers.add(h),
    off: (_: string, h: (u: User | null) => void) => handlers.delete(h),
    getUser: async () => user,
    login: vi.fn(async () => {
      user = {
        id: 'u',
        createdAt: '2026-01-01T00:00:00.000Z',
        linkedAccounts: [
          {
            type: 'wallet',
            address: ADDRESS,
            chainType: 'ethereum',
            chainId: 'eip155:1',
            walletClient: 'latch',
            walletClientType: 'latch',
            connectorType: 'embedded',
            recoveryMethod: 'latch',
            verifiedAt: '2026-01-01T00:00:00.000Z',
          },
        ],
      }
      for (const h of handlers) h(user)
      return { user, isNewUser: true }
    }),
  } as unknown as LatchClient
  const unused = () => Promise.reject(new Error('not used here'))
  const provider = createProvider(client, unused, unused)
  Object.assign(client, { getEthereumProvider: async () => provider })
  return { client, provider }
}

test('behavior: the announced provider is listed by wagmi’s discovery as Latch and connects through the injected connector (signing in); beside latch() it is listed once', async () => {
  const { client, provider } = standInClient()
  announce(provider)

  const injectedOnly = createConfig({ chains: [mainnet], transports: { [mainnet.id]: http() } })
  const discovered = injectedOnly.connectors.find((c) => c.id === 'dev.latch.wallet')
  expect(discovered).toMatchObject({ name: 'Latch', type: 'injected' })
  if (!discovered) throw new Error('not discovered')
  expect(await connect(injectedOnly, { connector: discovered })).toEqual({
    accounts: [ADDRESS],
    chainId: 1,
  })
  expect(client.login).toHaveBeenCalledTimes(1)

  const withLatch = createConfig({
    chains: [mainnet],
    connectors: [latch({ client })],
    transports: { [mainnet.id]: http() },
  })
  window.dispatchEvent(new Event('eip6963:requestProvider'))
  const listed = withLatch.connectors.filter(
    (c) => c.rdns === 'dev.latch.wallet' || c.id === 'dev.latch.wallet',
  )
  expect(listed.map((c) => c.id)).toEqual(['latch'])
})
