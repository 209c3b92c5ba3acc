/**
 * The phone wallet of the WalletConnect tests: WalletConnect's own sign client (the library
 * wallets build on) in this process, on the local relay (wc-relay.ts), backed by a real viem
 * key. It pairs from the URI the modal's QR code carries, approves or rejects the session
 * proposal (wc_proposeSession → wc_approveSession are the sign client's), and answers
 * personal_sign with a real signature or a rejection.
 */
import { randomUUID } from 'node:crypto'
import { SignClient } from '@walletconnect/sign-client'
import type { Hex } from 'viem'
import type { PrivateKeyAccount } from 'viem/accounts'

/** What the wallet does with the next proposals and signature requests. */
export type WalletChoice = 'approve' | 'reject'

export interface WalletConnectWallet {
  address: Hex
  /** Pairs with the modal from the pairing URI (wc:…@2?…symKey=…). */
  pair(uri: string): Promise<void>
  behave(choice: WalletChoice, what: 'proposal' | 'personal_sign'): void
  /** The requests the wallet received, in order (method and chain). */
  requests: { method: string; chainId: string }[]
  /** The proposals the wallet received (how many pairings reached it). */
  proposals: number
  close(): Promise<void>
}

/** The sign client's storage in memory: every wallet starts empty and leaves nothing behind. */
class MemoryStorage {
  private readonly items = new Map<string, unknown>()
  async getKeys(): Promise<string[]> {
    return [...this.items.keys()]
  }
  async getEntries<T>(): Promise<[string, T][]> {
    return [...this.items.entries()] as [string, T][]
  }
  async getItem<T>(key: string): Promise<T | undefined> {
    return this.items.get(key) as T | undefined
  }
  async setItem<T>(key: string, value: T): Promise<void> {
    this.items.set(key, value)
  }
  async removeItem(key: string): Promise<void> {
    this.items.delete(key)
  }
}

/** WalletConnect's "user rejected" error (its SDK error USER_REJECTED). */
const USER_REJECTED = { code: 5000, message: 'User rejected.' }

export async function startWalletConnectWallet(options: {
  relayUrl: string
  projectId: string
  account: PrivateKeyAccount
}): Promise<WalletConnectWallet> {
  const { account } = options
  const client = await SignClient.init({
    projectId: options.projectId,
    relayUrl: options.relayUrl,
    logger: 'silent',
    telemetryEnabled: false,
    storage: new MemoryStorage(),
    // A core of its own: WalletConnect keeps one core per storage prefix in globalThis and hands
    // it to the next client, so an earlier wallet of this process would answer this one's
    // requests with its own key.
    customStoragePrefix: `wallet-${randomUUID()}`,
    metadata: {
      name: 'Test Phone Wallet',
      description: 'The Latch tests’ WalletConnect wallet',
      url: 'https://wallet.latch.test',
      icons: [],
    },
  })
  const choices: Record<'proposal' | 'personal_sign', WalletChoice> = {
    proposal: 'approve',
    personal_sign: 'approve',
  }
  const wallet: WalletConnectWallet = {
    address: account.address,
    requests: [],
    proposals: 0,
    async pair(uri) {
      await client.pair({ uri })
    },
    behave(choice, what) {
      choices[what] = choice
    },
    async close() {
      client.removeAllListeners('session_proposal')
      client.removeAllListeners('session_request')
      await client.core.relayer.transportClose().catch(() => {})
    },
  }

  client.on('session_proposal', ({ id, params }) => {
    wallet.proposals++
    if (choices.proposal === 'reject') {
      void client.reject({ id, reason: USER_REJECTED })
      return
    }
    // Every chain the modal offers, the methods and events it asks for, this one account.
    const wanted = params.optionalNamespaces.eip155 ?? params.requiredNamespaces.eip155
    const chains = wanted?.chains ?? ['eip155:1']
    void client.approve({
      id,
      namespaces: {
        eip155: {
          chains,
          accounts: chains.map((chain) => `${chain}:${account.address}`),
          methods: wanted?.methods ?? ['personal_sign'],
          events: wanted?.events ?? ['accountsChanged', 'chainChanged'],
        },
      },
    })
  })

  client.on('session_request', ({ id, topic, params }) => {
    const { request, chainId } = params
    wallet.requests.push({ method: request.method, chainId })
    const answer = async (): Promise<unknown> => {
      if (request.method !== 'personal_sign') throw { code: 4200, message: 'Unsupported method' }
      if (choices.personal_sign === 'reject') throw USER_REJECTED
      const [message, address] = request.params as [Hex, string]
      if (address.toLowerCase() !== account.address.toLowerCase()) {
        throw { code: 4100, message: 'Unknown account' }
      }
      return account.signMessage({ message: { raw: message } })
    }
    answer().then(
      (result) => client.respond({ topic, response: { id, jsonrpc: '2.0', result } }),
      (error: { code: number; message: string }) =>
        client.respond({ topic, response: { id, jsonrpc: '2.0', error } }),
    )
  })

  return wallet
}
