/**
 * What the wallet frame does for the modal: create a wallet, check it is usable on this device,
 * recover it on a new one. The API and the device-share store are passed in, so the same code
 * runs in the frame (fetch on its own origin, localStorage) and in tests (the real server in
 * process). The private key is rebuilt only in this module's local variables and zeroed after.
 */
import {
  createApiClient,
  type Hex,
  LatchError,
  validateNewPasscode,
  validatePasscode,
  type WalletChallengeResponse,
  type WalletCreateParams,
  type WalletCreateResponse,
  type WalletEvaluateResponse,
  type WalletInfoResponse,
  type WalletPasscodeBeginResponse,
  type WalletPasskeyOptionsResponse,
  type WalletPasskeyRecoverResponse,
  type WalletRecoverParams,
  type WalletSharesResponse,
  walletCreationDigest,
  walletCreationMessage,
} from '@latch/shared'
import { addressOf, combineShares, fromHex, newPrivateKey, splitKey, toHex } from './keys.ts'
import {
  blind,
  finish,
  KDF_PARAMS,
  type KdfParams,
  openShare,
  sealShare,
  stretch,
} from './passcode.ts'
// Types only: the sealing is loaded when used, so the export page (which shares this file and
// never seals) carries none of it.
import type { PasskeyAuthenticator, PrfResult } from './passkey.ts'

/** One authenticated POST to the API; answers the JSON body or throws its LatchError. */
export type WalletApi = <T>(path: string, body: unknown, accessToken: string) => Promise<T>

/** Where the device share lives: wallet-origin storage where allowed, else frame memory. */
export interface ShareStore {
  get(address: string): Uint8Array | undefined
  set(address: string, share: Uint8Array): void
  /** Whether the share survives a reload (false when the browser refuses storage). */
  readonly persistent: boolean
}

/** What the frame names itself in the `latch-client` header. */
const FRAME_CLIENT = 'latch-wallet-frame'
/** The frame's API calls wait longer than the modal's (API_TIMEOUT_MS). */
export const WALLET_API_TIMEOUT_MS = 15_000

/**
 * The shared API client (createApiClient) over fetch, for the frame: `base` is the API origin
 * (the frame's own), the access token comes with each call, and a request without an answer
 * reads 'Could not reach the Latch API'. The wait of a locked recovery or a rate limit travels
 * with the API's error to the modal.
 */
export function fetchApi(
  base: string,
  appId: string,
  fetcher: typeof fetch = fetch,
  timeoutMs = WALLET_API_TIMEOUT_MS,
): WalletApi {
  const client = createApiClient({
    baseUrl: base,
    appId,
    fetch: fetcher,
    timeoutMs,
    client: FRAME_CLIENT,
    credentials: 'same-origin',
    unreachable: (cause) =>
      LatchError.of('embedded_wallet_error', { message: 'Could not reach the Latch API', cause }),
  })
  return <T>(path: string, body: unknown, accessToken: string) =>
    client.request<T>(path, body, { bearer: accessToken })
}

/** Storage in `storage` when the browser allows it, else memory for the life of the frame. */
export function shareStore(appId: string, storage: () => Storage): ShareStore {
  const memory = new Map<string, string>()
  const keyOf = (address: string) => `latch:wallet:${appId}:${address.toLowerCase()}`
  let persistent = true
  let store: Storage | undefined
  try {
    // Chromium refuses storage to a cross-site frame by default (SecurityError).
    store = storage()
    const probe = `${keyOf('probe')}`
    store.setItem(probe, '1')
    store.removeItem(probe)
  } catch {
    store = undefined
    persistent = false
  }
  return {
    persistent,
    get(address) {
      const hex = memory.get(keyOf(address)) ?? store?.getItem(keyOf(address)) ?? undefined
      return hex ? fromHex(hex) : undefined
    },
    set(address, share) {
      memory.set(keyOf(address), toHex(share))
      try {
        store?.setItem(keyOf(address), toHex(share))
      } catch {
        // Quota or a policy change: the share stays in memory for this frame's life.
      }
    },
  }
}

export interface WalletCoreOptions {
  api: WalletApi
  store: ShareStore
  /** Tests may lower it; the frame always uses the default (OWASP's minimum). */
  kdf?: KdfParams
  chainId?: string
  /** The WebAuthn ceremonies for passkey recovery (the frame's own navigator.credentials). */
  passkeys?: PasskeyAuthenticator
}

/** The name a recovery passkey shows in the visitor's passkey manager. */
const passkeyName = (address: string) =>
  `Wallet ${address.slice(0, 6)}…${address.slice(-4)} (recovery)`

export function walletCore({ api, store, kdf = KDF_PARAMS, chainId, passkeys }: WalletCoreOptions) {
  function authenticator(): PasskeyAuthenticator {
    if (!passkeys) throw LatchError.of('passkey_prf_unsupported')
    return passkeys
  }

  /**
   * Registers a passkey for `address` and seals `share` under its PRF output. The PRF output is
   * zeroed once used; only the credential id, the salt and the sealing leave this function.
   */
  async function sealUnderPasskey(
    address: string,
    share: Uint8Array,
    accessToken: string,
    credentialId: string | undefined,
  ) {
    const options = await api<WalletPasskeyOptionsResponse>(
      '/wallets/passkey/options',
      {},
      accessToken,
    )
    // Per wallet and random, released only behind the wallet routes' gates: a page of another
    // subdomain of the RP ID, which may run its own ceremony, cannot name the salt to ask for.
    const salt = crypto.getRandomValues(new Uint8Array(32))
    const result: PrfResult =
      credentialId === undefined
        ? await authenticator().create({
            rpId: options.rpId,
            rpName: options.rpName,
            userName: passkeyName(address),
            salt,
          })
        : await authenticator().get({ rpId: options.rpId, credentials: [{ credentialId, salt }] })
    try {
      const { sealWithPasskey } = await import('./passkey.ts')
      const ciphertext = await sealWithPasskey(result.prf, share, {
        userId: options.userId,
        address,
        credentialId: result.credentialId,
      })
      return { credentialId: result.credentialId, salt: toHex(salt), ciphertext: toHex(ciphertext) }
    } finally {
      result.prf.fill(0)
    }
  }
  /** Combines, checks the address, zeroes the key: proves the wallet usable here. */
  async function check(shares: Uint8Array[], address: string): Promise<void> {
    const key = await combineShares(shares, address)
    key.fill(0)
  }

  /** A new device: one of the wallet's passkeys opens its sealed share. */
  async function recoverWithPasskey(address: Hex, accessToken: string) {
    const answer = await api<WalletPasskeyRecoverResponse>(
      '/wallets/passkey/recover',
      { address },
      accessToken,
    )
    if (answer.passkeys.length === 0) {
      throw LatchError.of('passkey_failed', { message: 'This wallet has no passkey' })
    }
    const result = await authenticator().get({
      rpId: answer.rpId,
      credentials: answer.passkeys.map((p) => ({
        credentialId: p.credentialId,
        salt: fromHex(p.salt),
      })),
    })
    let share: Uint8Array
    try {
      const sealing = answer.passkeys.find((p) => p.credentialId === result.credentialId)
      if (!sealing) throw LatchError.of('passkey_failed')
      const { openWithPasskey } = await import('./passkey.ts')
      share = await openWithPasskey(result.prf, fromHex(sealing.ciphertext), {
        userId: answer.userId,
        address,
        credentialId: result.credentialId,
      })
    } finally {
      result.prf.fill(0)
    }
    await check([share, fromHex(answer.authShare)], address)
    store.set(address, share)
    return { address }
  }

  /**
   * A new wallet's recovery record: its recovery share sealed under a passkey, under a random key
   * the server keeps (automatic recovery), or under the key a passcode gives through the OPRF
   * with the server (the passcode itself never leaves this frame).
   */
  async function sealRecovery(
    address: Hex,
    recoveryShare: Uint8Array,
    { accessToken, recoveryPin, recoveryMethod, credentialId }: WalletCreateParams,
  ): Promise<Record<string, string>> {
    if (recoveryMethod === 'passkey') {
      const sealing = await sealUnderPasskey(address, recoveryShare, accessToken, credentialId)
      return { method: 'passkey', ...sealing }
    }
    if (recoveryPin === undefined) {
      const recoveryKey = crypto.getRandomValues(new Uint8Array(32))
      const ciphertext = await sealShare(recoveryKey, recoveryShare, address)
      return { method: 'latch', key: toHex(recoveryKey), ciphertext: toHex(ciphertext) }
    }
    const salt = crypto.getRandomValues(new Uint8Array(16))
    const stretched = await stretch(recoveryPin, salt, kdf)
    const b = blind(stretched)
    const begun = await api<WalletPasscodeBeginResponse>(
      '/wallets/passcode/begin',
      { blinded: toHex(b.blinded) },
      accessToken,
    )
    const keys = finish(stretched, b, fromHex(begun.evaluated))
    const ciphertext = await sealShare(keys.recoveryKey, recoveryShare, address)
    return {
      method: 'user-passcode',
      salt: toHex(salt),
      ciphertext: toHex(ciphertext),
      verifier: toHex(keys.verifier),
      ticket: begun.ticket,
    }
  }

  /**
   * The proof of possession: the new key signs this very creation under the API's challenge, so
   * no address can be registered without its key.
   */
  async function proveCreation(
    key: Uint8Array,
    address: Hex,
    authShare: string,
    recovery: Record<string, string>,
    challenge: Promise<WalletChallengeResponse>,
  ): Promise<{ challenge: string; signature: string }> {
    const proofChallenge = (await challenge).challenge
    const digest = await walletCreationDigest({
      challenge: proofChallenge,
      address,
      chainId,
      authShare,
      recovery,
    })
    // Loaded here, not imported above: the export page shares this file and never creates,
    // so ethers' signing code stays out of its JavaScript.
    const { signPersonalMessage } = await import('./rpc/message.ts')
    const signature = signPersonalMessage(
      new TextEncoder().encode(walletCreationMessage(address, digest)),
      key,
    )
    return { challenge: proofChallenge, signature }
  }

  /** This device's share of `address` and the server's auth share: together, the key. */
  async function sharesHere(address: Hex, accessToken: string): Promise<Uint8Array[]> {
    const device = store.get(address)
    if (!device) throw LatchError.of('wallet_not_on_device')
    const { authShare } = await api<WalletSharesResponse>(
      '/wallets/shares',
      { address },
      accessToken,
    )
    return [device, fromHex(authShare)]
  }

  /**
   * The shares a recovery on a new device opens with (the auth share and the sealed recovery
   * share) and the key that opens the sealed one: the server's for an automatic wallet; for a
   * passcode, the OPRF's output, which the server releases the shares against.
   */
  async function recoverySecret(
    address: Hex,
    accessToken: string,
    info: WalletInfoResponse,
    recoveryPin: string | undefined,
  ): Promise<{ answer: WalletSharesResponse; recoveryKey: Uint8Array }> {
    if (info.recoveryMethod === 'latch') {
      const answer = await api<WalletSharesResponse>('/wallets/recover', { address }, accessToken)
      return { answer, recoveryKey: fromHex(answer.recovery?.key ?? '') }
    }
    if (!recoveryPin || !validatePasscode(recoveryPin).ok || !info.salt) {
      throw LatchError.of('invalid_recovery_pin')
    }
    const stretched = await stretch(recoveryPin, fromHex(info.salt), kdf)
    const b = blind(stretched)
    const { evaluated } = await api<WalletEvaluateResponse>(
      '/wallets/passcode/evaluate',
      { address, blinded: toHex(b.blinded) },
      accessToken,
    )
    const keys = finish(stretched, b, fromHex(evaluated))
    const answer = await api<WalletSharesResponse>(
      '/wallets/passcode/verify',
      { address, verifier: toHex(keys.verifier) },
      accessToken,
    )
    return { answer, recoveryKey: keys.recoveryKey }
  }

  return {
    async create({
      accessToken,
      recoveryPin,
      recoveryMethod,
      credentialId,
    }: WalletCreateParams): Promise<{ address: Hex }> {
      if (recoveryMethod === 'passkey' && recoveryPin !== undefined) {
        throw LatchError.of('invalid_request_arguments')
      }
      if (recoveryPin !== undefined) {
        // A passcode being chosen: the common weak ones are refused here too, whatever the
        // modal let through (recovery below keeps accepting any existing passcode).
        const valid = validateNewPasscode(recoveryPin)
        if (!valid.ok) throw valid.error
      }
      const challenge = api<WalletChallengeResponse>('/wallets/challenge', {}, accessToken)
      // Not rejected unhandled while the key is made and a passcode stretched.
      challenge.catch(() => {})
      const key = newPrivateKey()
      try {
        const address = addressOf(key)
        const shares = await splitKey(key)
        const recovery = await sealRecovery(address, shares.recovery, {
          accessToken,
          recoveryPin,
          recoveryMethod,
          credentialId,
        })
        const authShare = toHex(shares.auth)
        const proof = await proveCreation(key, address, authShare, recovery, challenge)
        await api<WalletCreateResponse>(
          '/wallets',
          { address, chainId, authShare, recovery, proof },
          accessToken,
        )
        store.set(address, shares.device)
        return { address }
      } finally {
        key.fill(0)
      }
    },

    /**
     * Checks the wallet is usable here. A device without the share asks the API for the
     * wallet's recovery first: a browser that refused this session's wallet credential then
     * hears wallet_sign_in_required at once, before the modal asks for a passcode or passkey
     * that could not help.
     */
    async connect({ address, accessToken }: { address: Hex; accessToken: string }) {
      if (!store.get(address)) {
        // Any other failure is the recovery's to meet and name, as before.
        const refused = await api<WalletInfoResponse>('/wallets/info', { address }, accessToken)
          .then(() => null)
          .catch((e: unknown) =>
            e instanceof LatchError && e.is('wallet_sign_in_required') ? e : null,
          )
        throw refused ?? LatchError.of('wallet_not_on_device')
      }
      await check(await sharesHere(address, accessToken), address)
      return { address }
    },

    /**
     * Rebuilds the key from the device share and the auth share (the connect path) for one
     * operation, and zeroes it when `use` is done, whether it succeeded or threw.
     */
    async withKey<T>(
      { address, accessToken }: { address: Hex; accessToken: string },
      use: (key: Uint8Array) => T | Promise<T>,
    ): Promise<T> {
      const key = await combineShares(await sharesHere(address, accessToken), address)
      try {
        return await use(key)
      } finally {
        key.fill(0)
      }
    },

    /** The RP ID and name a passkey for this wallet is registered under (nothing secret). */
    async passkeyOptions({ accessToken }: { accessToken: string }) {
      const { rpId, rpName } = await api<WalletPasskeyOptionsResponse>(
        '/wallets/passkey/options',
        {},
        accessToken,
      )
      return { rpId, rpName }
    },

    /**
     * Adds passkey recovery to a wallet usable on this device: the device's own share (with the
     * auth share it rebuilds the key, checked first) is sealed under a new passkey.
     */
    async addPasskey({
      address,
      accessToken,
      credentialId,
    }: {
      address: Hex
      accessToken: string
      credentialId?: string
    }) {
      const shares = await sharesHere(address, accessToken)
      await check(shares, address)
      const [device] = shares as [Uint8Array]
      const sealing = await sealUnderPasskey(address, device, accessToken, credentialId)
      await api('/wallets/passkey/add', { address, ...sealing }, accessToken)
      return { address }
    },

    async recover({ address, accessToken, recoveryPin, recoveryMethod }: WalletRecoverParams) {
      if (recoveryMethod === 'passkey') return recoverWithPasskey(address, accessToken)
      const info = await api<WalletInfoResponse>('/wallets/info', { address }, accessToken)
      if (info.recoveryMethod === 'passkey') return recoverWithPasskey(address, accessToken)
      const { answer, recoveryKey } = await recoverySecret(address, accessToken, info, recoveryPin)
      const share = await openShare(
        recoveryKey,
        fromHex(answer.recovery?.ciphertext ?? ''),
        address,
      )
      await check([share, fromHex(answer.authShare)], address)
      // The recovery share becomes this device's share: with the auth share it rebuilds the key.
      store.set(address, share)
      return { address }
    },
  }
}

export type WalletCore = ReturnType<typeof walletCore>
