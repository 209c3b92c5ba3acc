/**
 * The wallet requests the modal may make through the host page, and what is checked of each.
 * The modal needs only these to connect a wallet and sign in with it (SIWE); anything else
 * (eth_sendTransaction, eth_signTypedData_v4 permits, wallet_addEthereumChain with an RPC URL of
 * its choosing, …) is refused, so a compromised modal cannot ask the visitor's wallet for them
 * through this page. Params are rebuilt from what was checked, never passed through as given.
 */
import { LatchError } from '@latch/shared'

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const HEX = /^0x[0-9a-fA-F]*$/
const QUANTITY = /^0x[0-9a-fA-F]{1,16}$/
/** A SIWE message is well under 4 KB; hex doubles it. */
const MAX_MESSAGE_LENGTH = 8192
/** An EIP-6492 signature carries a factory call: a few KB, bounded here. */
const MAX_SIGNATURE_LENGTH = 65_536
const MAX_ACCOUNTS = 50

const refusedParams = () => LatchError.of('rpc_invalid_params')
const unexpectedAnswer = () =>
  LatchError.of('rpc_internal', { message: 'The wallet answered something unexpected' })

const noParams = (params: unknown) => {
  if (params !== undefined && !(Array.isArray(params) && params.length === 0)) throw refusedParams()
  return undefined
}

const accounts = (result: unknown) => {
  if (!Array.isArray(result) || !result.every((a) => typeof a === 'string' && ADDRESS.test(a))) {
    throw unexpectedAnswer()
  }
  return result.slice(0, MAX_ACCOUNTS) as string[]
}

/** The message of a personal_sign as text: hex-encoded UTF-8 (what viem sends) or plain. */
function messageText(message: string): string {
  if (!HEX.test(message) || message.length % 2) return message
  const bytes = new Uint8Array((message.length - 2) / 2)
  for (let i = 0; i < bytes.length; i++) {
    bytes[i] = Number.parseInt(message.slice(2 + i * 2, 4 + i * 2), 16)
  }
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
}

/**
 * personal_sign only for a Sign-In with Ethereum message for this very page (EIP-4361 starts
 * with the page's host, optionally after its scheme): the wallet then shows the visitor which site they sign in to, and a
 * compromised modal cannot have them sign a message meant for anything else.
 */
function siweParams(params: unknown, { host, protocol: scheme }: PageLocation): [string, string] {
  if (!Array.isArray(params) || params.length !== 2) throw refusedParams()
  const [message, address] = params as unknown[]
  if (typeof message !== 'string' || typeof address !== 'string') throw refusedParams()
  if (message.length > MAX_MESSAGE_LENGTH || !ADDRESS.test(address)) throw refusedParams()
  let textMessage: string
  try {
    textMessage = messageText(message)
  } catch {
    throw refusedParams()
  }
  // EIP-4361 allows the page's scheme before the domain.
  const intro = ' wants you to sign in with your Ethereum account:\n'
  if (![`${host}${intro}`, `${scheme}//${host}${intro}`].some((i) => textMessage.startsWith(i))) {
    throw refusedParams()
  }
  return [message, address]
}

/** What the checks need of the page's address. */
export type PageLocation = Pick<Location, 'host' | 'protocol'>

interface Allowed {
  /** The params to send, rebuilt from the modal's; throws rpc_invalid_params. */
  params(params: unknown, page: PageLocation): unknown
  /** The wallet's answer, checked; throws rpc_internal. */
  result(result: unknown): unknown
}

export const ALLOWED_REQUESTS: Readonly<Record<string, Allowed>> = {
  eth_requestAccounts: { params: noParams, result: accounts },
  eth_accounts: { params: noParams, result: accounts },
  eth_chainId: {
    params: noParams,
    result(result) {
      if (typeof result !== 'string' || !QUANTITY.test(result)) throw unexpectedAnswer()
      return result
    },
  },
  personal_sign: {
    params: siweParams,
    result(result) {
      if (typeof result !== 'string' || !HEX.test(result) || result.length > MAX_SIGNATURE_LENGTH) {
        throw unexpectedAnswer()
      }
      return result
    },
  },
  wallet_switchEthereumChain: {
    params(params) {
      const chainId: unknown = Array.isArray(params) && params.length === 1 && params[0]?.chainId
      if (typeof chainId !== 'string' || !QUANTITY.test(chainId)) throw refusedParams()
      return [{ chainId }]
    },
    // null on success (EIP-3326); nothing else of the answer matters.
    result: () => null,
  },
}

/** The allowed request for `method`, or undefined (an own property only: not `toString`). */
export const allowedRequest = (method: unknown): Allowed | undefined =>
  typeof method === 'string' && Object.hasOwn(ALLOWED_REQUESTS, method)
    ? ALLOWED_REQUESTS[method]
    : undefined

/** Event payloads, checked like answers: the modal receives only these shapes. */
export function eventPayload(event: string, payload: unknown): unknown {
  if (event === 'accountsChanged') return accounts(payload)
  if (event === 'chainChanged') {
    if (typeof payload !== 'string' || !QUANTITY.test(payload)) throw unexpectedAnswer()
    return payload
  }
  const { code, message } = (payload ?? {}) as { code?: unknown; message?: unknown }
  return {
    code: typeof code === 'number' ? code : 4900,
    message: typeof message === 'string' ? message.slice(0, 500) : 'Disconnected',
  }
}
