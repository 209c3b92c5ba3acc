/**
 * The Latch connector for wagmi 2 and 3 (@wagmi/core 2.22 and later): the in-app wallet through
 * the host SDK's EIP-1193 provider (`getEthereumProvider()`), so wagmi's own actions
 * (signMessage, signTypedData, sendTransaction, switchChain) open the modal's sign and review
 * screens.
 */
import type { LatchClient } from '@latch/host-sdk'
import { acquireLatch } from '@latch/host-sdk/shared-client'
import {
  ANNOUNCED_ICON,
  ANNOUNCED_NAME,
  ANNOUNCED_RDNS,
  type HostAppConfig,
  type LatchEthereumProvider,
} from '@latch/shared'
import { ChainNotConfiguredError, createConnector } from '@wagmi/core'
import {
  type Address,
  getAddress,
  numberToHex,
  type ProviderConnectInfo,
  ProviderDisconnectedError,
  SwitchChainError,
  UserRejectedRequestError,
} from 'viem'

/** wagmi's id; the name, icon and rdns are the provider's EIP-6963 announcement's. */
const ID = 'latch'

export type LatchParameters = (
  | {
      /** The app's id (25 characters). */
      appId: string
      /** Where the modal is served, e.g. 'https://auth.example.com'. */
      modalUrl: string
      /** Host configuration, used only if this connector is the first to start Latch on the page. */
      config?: HostAppConfig
      client?: undefined
    }
  | {
      /** A client the page already made (`createLatch`, or the script tag's `window.latch`). */
      client: LatchClient
    }
) & {
  /**
   * What wagmi's disconnect does: 'logout' (default) signs the user out of Latch too;
   * 'local' only disconnects wagmi, the user stays signed in (and reconnects on the next
   * connect without the sign-in screen).
   */
  disconnect?: 'logout' | 'local'
}

type StorageItem = { [key in `${typeof ID}.disconnected`]: true }

interface Eip1193Error {
  code?: unknown
}
const codeOf = (e: unknown) => (e as Eip1193Error | null)?.code

latch.type = 'latch' as const

/**
 * A wagmi connector for the in-app wallet.
 * @example createConfig({ chains: [mainnet], connectors: [latch({ appId, modalUrl })], transports })
 */
export function latch(parameters: LatchParameters) {
  const disconnectMode = parameters.disconnect ?? 'logout'
  let client: LatchClient | undefined
  let provider: Promise<LatchEthereumProvider> | undefined

  /** The client: the one given, else the page's shared one for this app (made on first use). */
  const getClient = (): LatchClient => {
    if (parameters.client) return parameters.client
    // Held for the page's life: a wagmi config has no teardown to release it in.
    client ??= acquireLatch({
      appId: parameters.appId,
      modalUrl: parameters.modalUrl,
      ...(parameters.config ? { config: parameters.config } : {}),
    }).client
    return client
  }

  return createConnector<LatchEthereumProvider, Record<string, unknown>, StorageItem>((config) => {
    let onAccountsChanged: ((accounts: string[]) => void) | undefined
    let onChainChanged: ((chainId: string) => void) | undefined
    let onConnect: ((info: ProviderConnectInfo) => void) | undefined
    let onDisconnect: ((error?: Error) => void) | undefined

    /** The connector's own handlers, bound once so removeListener removes what on() added. */
    const bindHandlers = (connector: {
      onAccountsChanged(accounts: string[]): void
      onChainChanged(chainId: string): void
      onConnect?(info: ProviderConnectInfo): void
      onDisconnect(error?: Error): void
    }) => {
      onAccountsChanged ??= connector.onAccountsChanged.bind(connector)
      onChainChanged ??= connector.onChainChanged.bind(connector)
      onDisconnect ??= connector.onDisconnect.bind(connector)
      onConnect ??= connector.onConnect?.bind(connector)
    }
    const request = async <T>(method: string, params?: unknown[]): Promise<T> => {
      const p = await provider_()
      return (await p.request(params ? { method, params } : { method })) as T
    }
    const provider_ = () => {
      provider ??= getClient().getEthereumProvider()
      // A failed load (the modal unreachable) is tried again on the next call.
      provider.catch(() => {
        provider = undefined
      })
      return provider
    }

    /** Listens as a connected wallet does: account, chain and disconnect events. */
    const listenConnected = async (p: LatchEthereumProvider) => {
      if (onConnect) p.removeListener('connect', onConnect as (payload: never) => void)
      if (onAccountsChanged) p.on('accountsChanged', onAccountsChanged as (p: never) => void)
      if (onChainChanged) p.on('chainChanged', onChainChanged as (p: never) => void)
      if (onDisconnect) p.on('disconnect', onDisconnect as (p: never) => void)
    }
    /** Listens as a disconnected wallet does: only for accounts appearing (a sign-in elsewhere). */
    const listenDisconnected = (p: LatchEthereumProvider) => {
      if (onAccountsChanged)
        p.removeListener('accountsChanged', onAccountsChanged as (p: never) => void)
      if (onChainChanged) p.removeListener('chainChanged', onChainChanged as (p: never) => void)
      if (onDisconnect) p.removeListener('disconnect', onDisconnect as (p: never) => void)
      if (onConnect) p.on('connect', onConnect as (payload: never) => void)
    }

    return {
      id: ID,
      name: ANNOUNCED_NAME,
      type: latch.type,
      icon: ANNOUNCED_ICON,
      // The announced provider's rdns: wagmi's discovery then does not list it a second time.
      rdns: ANNOUNCED_RDNS,

      async setup() {
        // wagmi runs setup when the config is made, on a server too: no client is made there.
        if (!parameters.client && typeof window === 'undefined') return
        bindHandlers(this)
        // wagmi does not wait for setup nor hear its failure: a provider that cannot load yet
        // (the modal unreachable) is asked for again by the next connect.
        await provider_().then(listenDisconnected, () => {})
      },

      async connect({ chainId, isReconnecting, withCapabilities } = {}) {
        const p = await provider_()
        let accounts: readonly Address[]
        try {
          // Reconnecting never opens the modal: only a session the browser still has counts.
          accounts = isReconnecting
            ? await this.getAccounts()
            : (await request<string[]>('eth_requestAccounts')).map((a) => getAddress(a))
        } catch (e) {
          if (codeOf(e) === 4001) throw new UserRejectedRequestError(e as Error)
          throw e
        }
        if (!accounts.length) throw new ProviderDisconnectedError(new Error('Not signed in'))

        bindHandlers(this)
        await listenConnected(p)

        // The provider starts on chain 1: move to the asked chain, else to the app's first
        // chain when the current one is not among the app's.
        let current = await this.getChainId()
        const target =
          chainId ?? (config.chains.some((c) => c.id === current) ? current : config.chains[0].id)
        if (target !== current)
          current = (await this.switchChain?.({ chainId: target }))?.id ?? current

        await config.storage?.removeItem(`${ID}.disconnected`)
        // `connect(config, { withCapabilities: true })` asks for each account with what the wallet
        // granted at connect (EIP-7846's wallet_connect): none here; the batch capabilities are
        // per chain, wallet_getCapabilities' (wagmi's getCapabilities).
        return {
          accounts: withCapabilities
            ? accounts.map((address) => ({ address, capabilities: {} }))
            : accounts,
          chainId: current,
        } as never
      },

      async disconnect() {
        const p = await provider_()
        listenDisconnected(p)
        if (disconnectMode === 'logout') {
          await getClient().logout()
        } else {
          // Still signed in: without this mark the next page load would reconnect.
          await config.storage?.setItem(`${ID}.disconnected`, true)
        }
      },

      async getAccounts() {
        return (await request<string[]>('eth_accounts')).map((a) => getAddress(a))
      },

      async getChainId() {
        return Number(await request<string>('eth_chainId'))
      },

      getProvider: provider_,

      async isAuthorized() {
        try {
          if (await config.storage?.getItem(`${ID}.disconnected`)) return false
          return (await this.getAccounts()).length > 0
        } catch {
          return false
        }
      },

      async switchChain({ chainId }) {
        const chain = config.chains.find((c) => c.id === chainId)
        if (!chain) throw new SwitchChainError(new ChainNotConfiguredError())
        try {
          await request('wallet_switchEthereumChain', [{ chainId: numberToHex(chainId) }])
        } catch (e) {
          if (codeOf(e) === 4001) throw new UserRejectedRequestError(e as Error)
          throw new SwitchChainError(e as Error)
        }
        return chain
      },

      onAccountsChanged(accounts) {
        if (accounts.length === 0) this.onDisconnect()
        else config.emitter.emit('change', { accounts: accounts.map((a) => getAddress(a)) })
      },

      onChainChanged(chain) {
        config.emitter.emit('change', { chainId: Number(chain) })
      },

      async onConnect(info) {
        const accounts = await this.getAccounts()
        if (!accounts.length) return
        if (await config.storage?.getItem(`${ID}.disconnected`)) return
        config.emitter.emit('connect', { accounts, chainId: Number(info.chainId) })
        await listenConnected(await provider_())
      },

      async onDisconnect() {
        config.emitter.emit('disconnect')
        listenDisconnected(await provider_())
      },
    }
  })
}
