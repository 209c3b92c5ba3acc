/**
 * A software WebAuthn authenticator for tests: ES256 keys from node:crypto, the attestation
 * object ('none') and authenticator data written by hand in CBOR. It answers the options the
 * server hands out the way a browser and a platform authenticator together would, so server
 * tests can drive real ceremonies, and, being written apart from @simplewebauthn/server, it
 * checks the server's use of that library against a second reading of the specification.
 * Tests only: nothing here verifies anything.
 */
import {
  createHash,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign as signData,
} from 'node:crypto'

type Cbor = number | string | Uint8Array | Map<Cbor, Cbor>

function head(major: number, value: number): Buffer {
  if (value < 24) return Buffer.from([(major << 5) | value])
  if (value < 0x100) return Buffer.from([(major << 5) | 24, value])
  if (value < 0x10000) {
    const b = Buffer.alloc(3)
    b[0] = (major << 5) | 25
    b.writeUInt16BE(value, 1)
    return b
  }
  const b = Buffer.alloc(5)
  b[0] = (major << 5) | 26
  b.writeUInt32BE(value, 1)
  return b
}

/** CBOR of the few types WebAuthn needs (RFC 8949 preferred encoding; map keys in given order). */
export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') {
    return value >= 0 ? head(0, value) : head(1, -1 - value)
  }
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8')
    return Buffer.concat([head(3, bytes.length), bytes])
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value])
  const parts = [head(5, value.size)]
  for (const [k, v] of value) parts.push(cbor(k), cbor(v))
  return Buffer.concat(parts)
}

const b64u = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url')
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest()

/** Authenticator data flags (WebAuthn §6.1). */
const UP = 0x01
const UV = 0x04
const BE = 0x08
const BS = 0x10
const AT = 0x40

export interface SoftCredential {
  id: Buffer
  rpId: string
  userHandle: Buffer
  privateKey: KeyObject
  publicKey: KeyObject
  counter: number
}

export interface CeremonyOptions {
  /** The origin the browser would write into clientDataJSON (default: the authenticator's). */
  origin?: string
  /** Whether the authenticator reports user verification (default true). */
  userVerified?: boolean
  /** The page around the frame the ceremony ran in (crossOrigin, topOrigin); none: top level. */
  topOrigin?: string
}

/** What the server's options carry that the authenticator reads. */
interface CreationOptions {
  challenge: string
  rp: { id?: string; name: string }
  user: { id: string; name: string }
}
interface RequestOptions {
  challenge: string
  rpId?: string
}

export interface RegistrationJSON {
  id: string
  rawId: string
  type: 'public-key'
  response: { clientDataJSON: string; attestationObject: string; transports: string[] }
  authenticatorAttachment: 'platform'
  clientExtensionResults: Record<string, unknown>
}

export interface AssertionJSON {
  id: string
  rawId: string
  type: 'public-key'
  response: {
    clientDataJSON: string
    authenticatorData: string
    signature: string
    userHandle: string
  }
  authenticatorAttachment: 'platform'
  clientExtensionResults: Record<string, unknown>
}

/**
 * A platform authenticator with a browser in front of it, on `origin`. Credentials are
 * discoverable; `counting: false` keeps every counter at 0, as synced passkeys do.
 */
export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = []
  constructor(
    readonly origin: string,
    readonly opts: { counting?: boolean; backedUp?: boolean } = {},
  ) {}

  /** navigator.credentials.create() answered, as `PublicKeyCredential.toJSON()`. */
  create(
    options: CreationOptions,
    ceremony: CeremonyOptions & { credentialId?: Buffer } = {},
  ): RegistrationJSON {
    const rpId = options.rp.id ?? new URL(this.origin).hostname
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const credential: SoftCredential = {
      id: ceremony.credentialId ?? randomBytes(32),
      rpId,
      userHandle: Buffer.from(options.user.id, 'base64url'),
      privateKey,
      publicKey,
      counter: 0,
    }
    this.credentials.push(credential)
    const jwk = publicKey.export({ format: 'jwk' })
    const coseKey = new Map<Cbor, Cbor>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x ?? '', 'base64url')],
      [-3, Buffer.from(jwk.y ?? '', 'base64url')],
    ])
    const idLength = Buffer.alloc(2)
    idLength.writeUInt16BE(credential.id.length)
    const authData = Buffer.concat([
      this.#authDataHead(credential, ceremony, AT),
      Buffer.alloc(16), // AAGUID: none
      idLength,
      credential.id,
      cbor(coseKey),
    ])
    const attestationObject = cbor(
      new Map<Cbor, Cbor>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    )
    return {
      id: b64u(credential.id),
      rawId: b64u(credential.id),
      type: 'public-key',
      response: {
        clientDataJSON: this.#clientData('webauthn.create', options.challenge, ceremony),
        attestationObject: b64u(attestationObject),
        transports: ['internal'],
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: { credProps: { rk: true } },
    }
  }

  /** navigator.credentials.get() answered with the first (or the given) credential of the RP ID. */
  get(
    options: RequestOptions,
    ceremony: CeremonyOptions & { credential?: SoftCredential } = {},
  ): AssertionJSON {
    const rpId = options.rpId ?? new URL(this.origin).hostname
    const credential = ceremony.credential ?? this.credentials.find((c) => c.rpId === rpId)
    if (!credential) throw new Error(`no credential for ${rpId}`)
    const authenticatorData = this.#authDataHead(credential, ceremony, 0)
    const clientDataJSON = this.#clientData('webauthn.get', options.challenge, ceremony)
    const signature = signData(
      'sha256',
      Buffer.concat([authenticatorData, sha256(Buffer.from(clientDataJSON, 'base64url'))]),
      credential.privateKey,
    )
    return {
      id: b64u(credential.id),
      rawId: b64u(credential.id),
      type: 'public-key',
      response: {
        clientDataJSON,
        authenticatorData: b64u(authenticatorData),
        signature: b64u(signature),
        userHandle: b64u(credential.userHandle),
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    }
  }

  /** Another device holding the same credentials (a synced passkey). */
  synced(origin = this.origin): SoftAuthenticator {
    const copy = new SoftAuthenticator(origin, this.opts)
    copy.credentials.push(...this.credentials.map((c) => ({ ...c })))
    return copy
  }

  #authDataHead(credential: SoftCredential, ceremony: CeremonyOptions, extra: number): Buffer {
    if (this.opts.counting !== false && extra === 0) credential.counter++
    const flags =
      UP | (ceremony.userVerified === false ? 0 : UV) | (this.opts.backedUp ? BE | BS : 0) | extra
    const counter = Buffer.alloc(4)
    counter.writeUInt32BE(credential.counter)
    return Buffer.concat([sha256(credential.rpId), Buffer.from([flags]), counter])
  }

  #clientData(type: string, challenge: string, ceremony: CeremonyOptions): string {
    return b64u(
      Buffer.from(
        JSON.stringify({
          type,
          challenge,
          origin: ceremony.origin ?? this.origin,
          crossOrigin: ceremony.topOrigin !== undefined,
          ...(ceremony.topOrigin ? { topOrigin: ceremony.topOrigin } : {}),
        }),
      ),
    )
  }
}
