/**
 * A stand-in for the wallet frame, which is another origin's page (the API's) and outside the
 * modal. It keeps the frame's contract of `WalletMethods`: the same arguments, answers of
 * addresses only, failures as LatchErrors that cross the shared serialization (as penpal
 * carries them), a device that forgets its share when it is "new", and the server's rules it
 * relies on (one wallet per user, five wrong passcodes lock recovery with a Retry-After).
 */
import {
  exposeMethods,
  type Hex,
  LatchError,
  type RecoveryMethod,
  remoteMethods,
  validateNewPasscode,
  type WalletAccount,
  type WalletMethods,
} from '@latch/shared'

export interface FrameCall {
  method: keyof WalletMethods
  params: Record<string, unknown>
}

export interface WalletFrameDouble {
  frame: WalletMethods
  calls: FrameCall[]
  /** The wallet the "server" holds for the user, if any. */
  wallet: WalletAccount | null
  /** Addresses whose device share this "device" holds. */
  device: Set<string>
  /** Makes the next call of `method` fail with `error`. */
  failNext(method: keyof WalletMethods, error: LatchError): void
  /** Wrong passcodes in a row. */
  failures: number
}

const LOCK_AFTER = 5
const LOCK_SECONDS = 60

/** The in-app wallet account the server links for a created wallet. */
export function walletAccount(address: Hex, recoveryMethod: RecoveryMethod): WalletAccount {
  return {
    type: 'wallet',
    address,
    chainType: 'ethereum',
    chainId: 'eip155:1',
    walletClient: 'latch',
    walletClientType: 'latch',
    connectorType: 'embedded',
    recoveryMethod,
    verifiedAt: '2026-01-01T00:00:00.000Z',
  }
}

export function walletFrameDouble(
  options: { wallet?: WalletAccount | null; passcode?: string } = {},
): WalletFrameDouble {
  let passcode = options.passcode ?? null
  const failing = new Map<keyof WalletMethods, LatchError>()
  const double: WalletFrameDouble = {
    frame: null as unknown as WalletMethods,
    calls: [],
    wallet: options.wallet ?? null,
    device: new Set(),
    failNext: (method, error) => failing.set(method, error),
    failures: 0,
  }
  const enter = (method: keyof WalletMethods, params: object): void => {
    double.calls.push({ method, params: { ...params } as Record<string, unknown> })
    const error = failing.get(method)
    if (error) {
      failing.delete(method)
      throw error
    }
    if (!('accessToken' in params) || !params.accessToken) {
      throw LatchError.of('invalid_request_arguments')
    }
  }
  const own = (address: Hex): WalletAccount => {
    if (!double.wallet || double.wallet.address !== address) throw LatchError.of('not_found')
    return double.wallet
  }
  const methods: WalletMethods = {
    async 'latch:wallet:create'(params) {
      enter('latch:wallet:create', params)
      if (params.recoveryPin !== undefined) {
        const valid = validateNewPasscode(params.recoveryPin)
        if (!valid.ok) throw valid.error
      }
      if (double.wallet) throw LatchError.of('wallet_already_exists')
      const address =
        `0x${'ab'.repeat(19)}${(double.calls.length % 256).toString(16).padStart(2, '0')}` as Hex
      passcode = params.recoveryPin ?? null
      double.wallet = walletAccount(address, passcode === null ? 'latch' : 'user-passcode')
      double.device.add(address)
      return { address }
    },
    async 'latch:wallet:connect'(params) {
      enter('latch:wallet:connect', params)
      own(params.address)
      if (!double.device.has(params.address)) throw LatchError.of('wallet_not_on_device')
      return { address: params.address }
    },
    async 'latch:wallet:recover'(params) {
      enter('latch:wallet:recover', params)
      const wallet = own(params.address)
      if (wallet.recoveryMethod === 'user-passcode') {
        if (double.failures >= LOCK_AFTER) {
          throw LatchError.of('recovery_locked', { retryAfter: LOCK_SECONDS })
        }
        if (params.recoveryPin !== passcode) {
          double.failures += 1
          throw LatchError.of('invalid_recovery_pin')
        }
        double.failures = 0
      }
      double.device.add(params.address)
      return { address: params.address }
    },
    async 'latch:wallet:rpc'(params) {
      enter('latch:wallet:rpc', params)
      throw LatchError.of('embedded_wallet_error')
    },
    async 'latch:wallet:confirm-fork'(params) {
      enter('latch:wallet:confirm-fork', params)
      throw LatchError.of('origin_not_allowed')
    },
    // The real frame settles once the visitor clicked in it; the double, at once.
    async 'latch:wallet:approval'(params) {
      enter('latch:wallet:approval', params)
      return { done: true }
    },
    async 'latch:wallet:dismiss-approval'() {
      double.calls.push({ method: 'latch:wallet:dismiss-approval', params: {} })
    },
    async 'latch:wallet:add-passkey'(params) {
      enter('latch:wallet:add-passkey', params)
      own(params.address)
      if (!double.device.has(params.address)) throw LatchError.of('wallet_not_on_device')
      return { address: params.address }
    },
    async 'latch:wallet:passkey-options'(params) {
      enter('latch:wallet:passkey-options', params)
      return { rpId: 'localhost', rpName: 'Test app' }
    },
  }
  // Through the shared serialization, as penpal carries the frame's answers.
  double.frame = remoteMethods<WalletMethods>(exposeMethods(methods))
  return double
}
