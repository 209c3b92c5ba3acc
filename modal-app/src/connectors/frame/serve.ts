/**
 * What the connector frame answers (frame/main.ts makes the handshake): WalletConnect's
 * provider, started, connected and asked through the calls of frame-protocol.ts only, with the
 * storage the modal keeps for it. Apart from main.ts so a test can serve it over a port.
 */

import { type PortEnd, portEnd } from '../frame-port.ts'
import {
  type CallMessage,
  FRAME_STORAGE_TIMEOUT_MS,
  parseInitArgs,
  parseModalCall,
  parseReply,
} from '../frame-protocol.ts'
import { providerOptions } from '../walletconnect-options.ts'

type EthereumProvider = Awaited<
  ReturnType<typeof import('@walletconnect/ethereum-provider')['EthereumProvider']['init']>
>

const ADDRESS = /^0x[0-9a-fA-F]{40}$/

const storageTimeout = () => new Error('the modal did not answer a storage call')

/** Serves the modal over `given`; `relayUrl` is the relay this page names. */
export function serveConnectorFrame(given: MessagePort, relayUrl: string): PortEnd {
  let provider: EthereumProvider | null = null
  let detach: (() => void) | null = null
  const post = (message: unknown) => given.postMessage(message)

  /** WalletConnect's storage: the modal keeps it (frame-host.ts); this origin has none. */
  const storage = {
    async call(method: string, args: unknown): Promise<unknown> {
      const reply = await port.call(method, args, FRAME_STORAGE_TIMEOUT_MS, storageTimeout)
      if (!reply.ok) throw new Error(reply.error?.message ?? 'storage refused')
      return reply.value
    },
    async getKeys(): Promise<string[]> {
      const keys = await storage.call('storage.getKeys', null)
      return Array.isArray(keys) ? keys.filter((k): k is string => typeof k === 'string') : []
    },
    async getEntries<T>(): Promise<[string, T][]> {
      const entries: [string, T][] = []
      for (const key of await storage.getKeys()) {
        const value = await storage.getItem<T>(key)
        if (value !== undefined) entries.push([key, value])
      }
      return entries
    },
    async getItem<T>(key: string): Promise<T | undefined> {
      const raw = await storage.call('storage.getItem', { key })
      return typeof raw === 'string' ? (JSON.parse(raw) as T) : undefined
    },
    async setItem<T>(key: string, value: T): Promise<void> {
      await storage.call('storage.setItem', { key, value: JSON.stringify(value) })
    },
    async removeItem(key: string): Promise<void> {
      await storage.call('storage.removeItem', { key })
    },
  }

  function state() {
    const p = provider
    if (!p) return undefined
    const name = p.session?.peer.metadata.name
    return {
      session: Boolean(p.session),
      accounts: (p.accounts ?? []).filter((a) => ADDRESS.test(a)).slice(0, 16),
      chainId: Number.isSafeInteger(p.chainId) ? p.chainId : 0,
      peerName: typeof name === 'string' ? name.slice(0, 200) : null,
    }
  }

  /** The provider's events, as plain data the modal checks. */
  function attach(p: EthereumProvider): () => void {
    const send = (name: string, payload: unknown) =>
      post({ t: 'event', name, payload, state: state() })
    const onUri = (uri: string) => send('display_uri', String(uri))
    const onAccounts = (accounts: string[]) =>
      send('accountsChanged', Array.isArray(accounts) ? accounts.map(String) : [])
    const onChain = (chainId: unknown) => send('chainChanged', String(chainId))
    const onDisconnect = () => send('disconnect', null)
    p.on('display_uri', onUri)
    p.on('accountsChanged', onAccounts)
    p.on('chainChanged', onChain)
    p.on('disconnect', onDisconnect)
    return () => {
      p.removeListener('display_uri', onUri)
      p.removeListener('accountsChanged', onAccounts)
      p.removeListener('chainChanged', onChain)
      p.removeListener('disconnect', onDisconnect)
    }
  }

  async function onCall(call: CallMessage): Promise<unknown> {
    switch (call.method) {
      case 'wc.init': {
        const args = parseInitArgs(call.args)
        if (!args) throw new Error('bad init')
        const { EthereumProvider } = await import('@walletconnect/ethereum-provider')
        const options = providerOptions({ projectId: args.projectId, relayUrl }, args.metadata)
        const built = await EthereumProvider.init({ ...options, storage })
        // WalletConnect Verify is left out: it would attest this frame's opaque origin, not the
        // host page the visitor sees (which the SIWE message names), through a third-party
        // frame this page's CSP refuses; refused, each proposal and request would wait 5 s.
        built.signer.client.core.verify.register = async () => ''
        detach?.()
        provider = built
        detach = attach(built)
        return null
      }
      case 'wc.connect':
        if (!provider) throw new Error('not started')
        if (!provider.session) await provider.connect()
        return null
      case 'wc.request': {
        if (!provider) throw new Error('not started')
        const { method, params } = call.args as { method: string; params?: object }
        return params === undefined
          ? provider.request({ method })
          : provider.request({ method, params: params as unknown[] })
      }
      case 'wc.disconnect':
        if (provider?.session) await provider.disconnect()
        return null
      default:
        throw new Error('unknown call')
    }
  }

  const port = portEnd(given, { parseReply, parseCall: parseModalCall, onCall, state })
  return port
}
