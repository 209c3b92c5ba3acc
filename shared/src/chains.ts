import { DEFAULT_CHAIN_ID } from './constants.ts'

export interface Chain {
  id: number
  name: string
  nativeCurrency: { name: string; symbol: string; decimals: number }
  rpcUrl: string
  explorerUrl: string
  testnet: boolean
}

const ETH = { name: 'Ether', symbol: 'ETH', decimals: 18 }

const SEPOLIA_ETH = { name: 'Sepolia Ether', symbol: 'ETH', decimals: 18 }

/** Polygon's coin since its 2024 migration from MATIC. */
const POL = { name: 'POL', symbol: 'POL', decimals: 18 }

/**
 * Every chain Latch knows, with public RPC and explorers: SPEC's list (docs/behaviour.md, "Input
 * rules"), then the chains in use today. Most of SPEC's test networks have shut down; they stay
 * here so an app can still name them (`apps update --chains spec`).
 */
export const CHAINS: readonly Chain[] = [
  {
    id: 1,
    name: 'Ethereum',
    nativeCurrency: ETH,
    rpcUrl: 'https://ethereum-rpc.publicnode.com',
    explorerUrl: 'https://etherscan.io',
    testnet: false,
  },
  {
    id: 5,
    name: 'Goerli',
    nativeCurrency: { name: 'Goerli Ether', symbol: 'ETH', decimals: 18 },
    rpcUrl: 'https://ethereum-goerli-rpc.publicnode.com',
    explorerUrl: 'https://goerli.etherscan.io',
    testnet: true,
  },
  {
    id: 10,
    name: 'Optimism',
    nativeCurrency: ETH,
    rpcUrl: 'https://mainnet.optimism.io',
    explorerUrl: 'https://optimistic.etherscan.io',
    testnet: false,
  },
  {
    id: 420,
    name: 'Optimism Goerli',
    nativeCurrency: { name: 'Goerli Ether', symbol: 'ETH', decimals: 18 },
    rpcUrl: 'https://goerli.optimism.io',
    explorerUrl: 'https://goerli-optimism.etherscan.io',
    testnet: true,
  },
  {
    id: 137,
    name: 'Polygon',
    nativeCurrency: POL,
    rpcUrl: 'https://polygon-rpc.com',
    explorerUrl: 'https://polygonscan.com',
    testnet: false,
  },
  {
    id: 80001,
    name: 'Mumbai',
    nativeCurrency: { name: 'MATIC', symbol: 'MATIC', decimals: 18 },
    rpcUrl: 'https://rpc-mumbai.maticvigil.com',
    explorerUrl: 'https://mumbai.polygonscan.com',
    testnet: true,
  },
  {
    id: 42161,
    name: 'Arbitrum One',
    nativeCurrency: ETH,
    rpcUrl: 'https://arb1.arbitrum.io/rpc',
    explorerUrl: 'https://arbiscan.io',
    testnet: false,
  },
  {
    id: 421613,
    name: 'Arbitrum Goerli',
    nativeCurrency: { name: 'Goerli Ether', symbol: 'ETH', decimals: 18 },
    rpcUrl: 'https://goerli-rollup.arbitrum.io/rpc',
    explorerUrl: 'https://goerli.arbiscan.io',
    testnet: true,
  },
  {
    id: 42220,
    name: 'Celo',
    nativeCurrency: { name: 'Celo', symbol: 'CELO', decimals: 18 },
    rpcUrl: 'https://forno.celo.org',
    explorerUrl: 'https://celoscan.io',
    testnet: false,
  },
  {
    id: 44787,
    name: 'Alfajores',
    nativeCurrency: { name: 'Celo', symbol: 'CELO', decimals: 18 },
    rpcUrl: 'https://alfajores-forno.celo-testnet.org',
    explorerUrl: 'https://alfajores.celoscan.io',
    testnet: true,
  },
  {
    id: 314,
    name: 'Filecoin',
    nativeCurrency: { name: 'Filecoin', symbol: 'FIL', decimals: 18 },
    rpcUrl: 'https://api.node.glif.io/rpc/v1',
    explorerUrl: 'https://filfox.info/en',
    testnet: false,
  },
  {
    id: 314159,
    name: 'Filecoin Calibration',
    nativeCurrency: { name: 'Testnet Filecoin', symbol: 'tFIL', decimals: 18 },
    rpcUrl: 'https://api.calibration.node.glif.io/rpc/v1',
    explorerUrl: 'https://calibration.filfox.info/en',
    testnet: true,
  },
  {
    id: 84531,
    name: 'Base Goerli',
    nativeCurrency: { name: 'Goerli Ether', symbol: 'ETH', decimals: 18 },
    rpcUrl: 'https://goerli.base.org',
    explorerUrl: 'https://goerli.basescan.org',
    testnet: true,
  },
  {
    id: 11155111,
    name: 'Sepolia',
    nativeCurrency: SEPOLIA_ETH,
    rpcUrl: 'https://ethereum-sepolia-rpc.publicnode.com',
    explorerUrl: 'https://sepolia.etherscan.io',
    testnet: true,
  },
  {
    id: 8453,
    name: 'Base',
    nativeCurrency: ETH,
    rpcUrl: 'https://mainnet.base.org',
    explorerUrl: 'https://basescan.org',
    testnet: false,
  },
  {
    id: 84532,
    name: 'Base Sepolia',
    nativeCurrency: SEPOLIA_ETH,
    rpcUrl: 'https://sepolia.base.org',
    explorerUrl: 'https://sepolia.basescan.org',
    testnet: true,
  },
  {
    id: 11155420,
    name: 'OP Sepolia',
    nativeCurrency: SEPOLIA_ETH,
    rpcUrl: 'https://sepolia.optimism.io',
    explorerUrl: 'https://sepolia-optimism.etherscan.io',
    testnet: true,
  },
  {
    id: 421614,
    name: 'Arbitrum Sepolia',
    nativeCurrency: SEPOLIA_ETH,
    rpcUrl: 'https://sepolia-rollup.arbitrum.io/rpc',
    explorerUrl: 'https://sepolia.arbiscan.io',
    testnet: true,
  },
  {
    id: 80002,
    name: 'Polygon Amoy',
    nativeCurrency: POL,
    rpcUrl: 'https://rpc-amoy.polygon.technology',
    explorerUrl: 'https://amoy.polygonscan.com',
    testnet: true,
  },
]

/**
 * SPEC's list, literally: Goerli, Mumbai, Alfajores and the Goerli rollups among them have shut
 * down. An app has it only when its operator names it (`apps create|update --chains spec`).
 */
export const SPEC_CHAIN_IDS: readonly number[] = [
  1, 5, 10, 420, 137, 80001, 42161, 421613, 42220, 44787, 314, 314159, 84531,
]

/**
 * An app's chains unless its operator chose others (`apps create|update --chains`): SPEC's
 * main networks and Base, then the test networks that run today.
 */
export const DEFAULT_CHAIN_IDS: readonly number[] = [
  1, 10, 137, 42161, 8453, 42220, 314, 11155111, 84532, 11155420, 421614, 80002, 314159,
]

export type ChainOverrides = Partial<Record<number, { rpcUrl?: string; explorerUrl?: string }>>

/**
 * Whether the chain is in `chains` (an app's list, `ServerAppConfig.chains`), or, without a
 * list, one Latch knows at all (`CHAINS`).
 */
export function isSupportedChainId(id: unknown, chains?: readonly number[]): id is number {
  return (
    typeof id === 'number' &&
    CHAINS.some((c) => c.id === id) &&
    (chains === undefined || chains.includes(id))
  )
}

/** The chain a wallet starts on for an app: SPEC's default (1) when the app has it, else its first. */
export function defaultChainOf(chains: readonly number[]): number {
  return chains.includes(DEFAULT_CHAIN_ID) ? DEFAULT_CHAIN_ID : (chains[0] ?? DEFAULT_CHAIN_ID)
}

/**
 * The supported chain with that id, with its RPC and explorer URLs overridden where asked.
 * @example getChain(1, { 1: { rpcUrl: 'http://127.0.0.1:8545' } })
 */
export function getChain(id: number, overrides: ChainOverrides = {}): Chain | undefined {
  const chain = CHAINS.find((c) => c.id === id)
  if (!chain) return undefined
  const o = overrides[id]
  return o ? { ...chain, ...o } : chain
}

export const DEFAULT_CHAIN = getChain(DEFAULT_CHAIN_ID) as Chain

/** CAIP-2 form of an EVM chain id, as linked wallet accounts carry it. */
export function caip2(chainId: number): string {
  return `eip155:${chainId}`
}
