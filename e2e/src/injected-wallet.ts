/**
 * A browser extension wallet, as a test double: an EIP-1193 provider injected into the top page
 * of every page of a browser context (context.addInitScript), announced by EIP-6963 and, if
 * asked, as `window.ethereum`. It stands in for something outside the machine (the visitor's
 * extension) and speaks its real protocol.
 *
 * The key is real: the page's provider hands each request to Node (context.exposeBinding), where
 * a viem account answers, so signatures verify like a real wallet's. What it does is switchable
 * per test, per method or for all: approve, reject (4001 'User rejected the request.'), stay
 * pending (-32002, MetaMask's "already pending" text) or never answer. A smart-contract wallet
 * is the same double with another `account` (an address and a signMessage that produces its
 * EIP-1271 or EIP-6492 signature with the owner's key).
 */
import type { BrowserContext, Frame } from 'playwright-core'
import { type Hex, hexToString, isHex, numberToHex } from 'viem'
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts'

/** anvil's second funded account: a key known to be a test key. */
export const TEST_WALLET_KEY: Hex =
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a7d66aac8c6e71e8690'

export type WalletBehaviour = 'approve' | 'reject' | 'pending' | 'hang'

/** What signs for the wallet: a private key account, or a contract wallet's own signer. */
export interface WalletAccount {
  address: Hex
  signMessage(args: { message: string | { raw: Hex } }): Promise<Hex>
}

export interface InjectedWalletOptions {
  /** Defaults to an account of TEST_WALLET_KEY. */
  account?: WalletAccount
  uuid?: string
  name?: string
  /** A data:image URI (default: a small SVG). */
  icon?: string
  rdns?: string
  /** Also set `window.ethereum` to the provider (with `flags` on it). */
  legacy?: boolean
  flags?: Record<string, boolean>
  /** Announce by EIP-6963 (default true). */
  announce?: boolean
  chainId?: number
}

export interface WalletRequest {
  method: string
  params: unknown
  /** The origin of the page that made the request (a real wallet credits it). */
  origin: string
}

export interface InjectedWallet {
  readonly address: Hex
  readonly uuid: string
  readonly chainId: number
  /** Every request, in order. */
  readonly requests: WalletRequest[]
  /** What the wallet does from now on, for `method` or for every method without its own. */
  behave(behaviour: WalletBehaviour, method?: string): void
  /** Emits an EIP-1193 event from the provider in every page of the context. */
  emit(event: string, payload: unknown): Promise<void>
}

const DEFAULT_ICON = `data:image/svg+xml;base64,${Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32"><rect width="32" height="32" rx="8" fill="#2b6cb0"/></svg>',
).toString('base64')}`

type Answer = { result: unknown } | { error: { code: number; message: string } } | { hang: true }

interface PageConfig {
  binding: string
  emitter: string
  info: { uuid: string; name: string; icon: string; rdns: string }
  legacy: boolean
  announce: boolean
  flags: Record<string, boolean>
}

/**
 * Runs in the page, before its scripts: the provider and its announcement. Self-contained (the
 * engine lanes install it in a loaded page: engines/flows.ts).
 */
export function installProvider(config: PageConfig): void {
  // Extensions inject into the top page; several inject nothing into frames.
  if (window.top !== window) return
  const listeners = new Map<string, Set<(payload: unknown) => void>>()
  const call = (window as unknown as Record<string, (r: unknown) => Promise<Answer>>)[
    config.binding
  ] as (r: unknown) => Promise<Answer>
  const provider = {
    ...config.flags,
    async request(args: { method?: unknown; params?: unknown }) {
      if (!args || typeof args.method !== 'string') {
        throw Object.assign(new Error('Invalid request'), { code: -32600 })
      }
      const answer = await call({ method: args.method, params: args.params ?? null })
      if ('hang' in answer) return new Promise(() => {})
      if ('error' in answer) {
        throw Object.assign(new Error(answer.error.message), { code: answer.error.code })
      }
      return answer.result
    },
    on(event: string, listener: (payload: unknown) => void) {
      const set = listeners.get(event) ?? new Set()
      set.add(listener)
      listeners.set(event, set)
      return provider
    },
    removeListener(event: string, listener: (payload: unknown) => void) {
      listeners.get(event)?.delete(listener)
      return provider
    },
  }
  Object.defineProperty(window, config.emitter, {
    value: (event: string, payload: unknown) => {
      for (const listener of listeners.get(event) ?? []) listener(payload)
    },
  })
  if (config.announce) {
    const detail = Object.freeze({ info: Object.freeze({ ...config.info }), provider })
    const announce = () =>
      window.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail }))
    window.addEventListener('eip6963:requestProvider', announce)
    announce()
  }
  if (config.legacy) (window as unknown as { ethereum: unknown }).ethereum = provider
}

/** A personal_sign message as viem takes it: hex bytes raw, anything else as text. */
const signable = (message: unknown): string | { raw: Hex } =>
  typeof message === 'string' && isHex(message) ? { raw: message } : String(message)

/**
 * Injects the wallet into every page `context` opens from now on. Call before the page opens.
 * @example const wallet = await injectWallet(context); wallet.behave('reject', 'personal_sign')
 */
export async function injectWallet(
  context: BrowserContext,
  options: InjectedWalletOptions = {},
): Promise<InjectedWallet> {
  const account: WalletAccount | PrivateKeyAccount =
    options.account ?? privateKeyToAccount(TEST_WALLET_KEY)
  const uuid = options.uuid ?? crypto.randomUUID()
  const tag = uuid.replace(/\W/g, '_')
  const config: PageConfig = {
    binding: `__latchTestWallet_${tag}`,
    emitter: `__latchTestWalletEmit_${tag}`,
    info: {
      uuid,
      name: options.name ?? 'Test Wallet',
      icon: options.icon ?? DEFAULT_ICON,
      rdns: options.rdns ?? 'test.latch.wallet',
    },
    legacy: options.legacy ?? false,
    announce: options.announce ?? true,
    flags: options.flags ?? {},
  }
  const behaviours = new Map<string, WalletBehaviour>()
  const requests: WalletRequest[] = []
  let chainId = options.chainId ?? 1
  let connected = false

  const approve = async (method: string, params: unknown): Promise<Answer> => {
    const list = Array.isArray(params) ? params : []
    switch (method) {
      case 'eth_requestAccounts':
        connected = true
        return { result: [account.address] }
      case 'eth_accounts':
        return { result: connected ? [account.address] : [] }
      case 'eth_chainId':
        return { result: numberToHex(chainId) }
      case 'personal_sign': {
        const [message, address] = list as [unknown, unknown]
        if (
          typeof address !== 'string' ||
          address.toLowerCase() !== account.address.toLowerCase()
        ) {
          return { error: { code: 4100, message: 'The requested account has not been authorized' } }
        }
        return { result: await account.signMessage({ message: signable(message) }) }
      }
      case 'wallet_switchEthereumChain': {
        const requested = (list[0] as { chainId?: unknown } | undefined)?.chainId
        if (typeof requested !== 'string' || !isHex(requested)) {
          return { error: { code: -32602, message: 'Invalid chainId' } }
        }
        chainId = Number(requested)
        return { result: null }
      }
      default:
        return { error: { code: 4200, message: `Unsupported method: ${method}` } }
    }
  }

  await context.exposeBinding(
    config.binding,
    async (source: { frame: Frame }, request: { method: string; params: unknown }) => {
      const { method, params } = request
      requests.push({ method, params, origin: new URL(source.frame.url()).origin })
      const behaviour = behaviours.get(method) ?? behaviours.get('*') ?? 'approve'
      if (behaviour === 'hang') return { hang: true } satisfies Answer
      if (behaviour === 'reject') {
        return { error: { code: 4001, message: 'User rejected the request.' } } satisfies Answer
      }
      if (behaviour === 'pending') {
        const origin = new URL(source.frame.url()).origin
        return {
          error: {
            code: -32002,
            message: `Request of type '${method}' already pending for origin ${origin}. Please wait.`,
          },
        } satisfies Answer
      }
      return approve(method, params)
    },
  )
  await context.addInitScript(installProvider, config)

  return {
    address: account.address,
    uuid,
    get chainId() {
      return chainId
    },
    requests,
    behave(behaviour, method = '*') {
      behaviours.set(method, behaviour)
    },
    async emit(event, payload) {
      for (const page of context.pages()) {
        await page.evaluate(
          ([emitter, name, value]) =>
            (window as unknown as Record<string, (e: unknown, p: unknown) => void>)[
              emitter as string
            ]?.(name, value),
          [config.emitter, event, payload] as const,
        )
      }
    },
  }
}

/** The text of a personal_sign message the wallet received (hex-encoded UTF-8 or plain). */
export const signedText = (message: unknown): string =>
  typeof message === 'string' && isHex(message) ? hexToString(message) : String(message)
