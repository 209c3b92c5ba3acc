/**
 * Per-app ES256 signing keys: a current key that signs access tokens, a next key published
 * ahead of rotation and, after a rotation, the previous key until the one after. Private keys are sealed under the server secret; decrypted keys are cached.
 */

import type { AccessTokenClaims } from '@latch/shared'
import { LatchError } from '@latch/shared'
import {
  type CryptoKey,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  importJWK,
  importSPKI,
  type JWK,
  type JWTPayload,
  jwtVerify,
  SignJWT,
} from 'jose'
import type { Clock } from './clock.ts'
import type { Secrets } from './crypto.ts'
import { randomId } from './crypto.ts'
import { type Db, json } from './db/index.ts'
import { rowMac, rowMacHolds } from './row-mac.ts'

const ALG = 'ES256'
/** How long decrypted keys are kept before they are read again. */
export const KEY_CACHE_MS = 5 * 60_000

export interface KeyStore {
  /** Makes sure the app has a current and a next key. */
  ensureKeys(db: Db, appId: string): Promise<void>
  /** The published key set of the app: current, next and (after a rotation) previous. */
  jwks(appId: string): Promise<{ keys: JWK[] }>
  /** PEM (SPKI) of the key that currently signs. */
  verificationKey(appId: string): Promise<string>
  /** Promotes next to current, keeps the old current as previous, and creates a new next key. */
  rotate(appId: string): Promise<void>
  signAccessToken(appId: string, userId: string, sessionId: string): Promise<string>
  /** Verifies signature, issuer, audience and expiry; throws not_authenticated. */
  verifyAccessToken(appId: string, token: string): Promise<AccessTokenClaims>
}

interface LoadedKey {
  kid: string
  status: string
  publicJwk: JWK
  publicPem: string
  privateKey: CryptoKey | null
  publicKey: CryptoKey
}

export function createKeyStore(opts: {
  db: Db
  secrets: Secrets
  clock: Clock
  issuer: string
  accessTokenTtlS: number
  log?: (line: string) => void
}): KeyStore {
  const { db, secrets, clock } = opts
  const log = opts.log ?? (() => {})
  // Reloaded now and then, so a rotation by another process reaches this one.
  const cache = new Map<string, { at: number; keys: Promise<LoadedKey[]> }>()

  async function newKey(trxDb: Db, appId: string, status: string): Promise<void> {
    const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true })
    const kid = randomId(16)
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' }
    const privateJwk = await exportJWK(privateKey)
    const publicPem = await exportSPKI(publicKey)
    await trxDb
      .insertInto('signing_keys')
      .values({
        kid,
        app_id: appId,
        status,
        public_jwk: json(publicJwk),
        public_pem: publicPem,
        mac: rowMac(secrets, 'signing_key', { kid, app_id: appId, public_pem: publicPem }),
        private_sealed: secrets.encrypt(JSON.stringify(privateJwk)),
        created_at: clock.now(),
      })
      .execute()
  }

  async function load(appId: string): Promise<LoadedKey[]> {
    const rows = await db
      .selectFrom('signing_keys')
      .selectAll()
      .where('app_id', '=', appId)
      .where('status', 'in', ['current', 'next', 'previous'])
      .execute()
    // A key written without the server secret (a public key of someone else's) verifies nothing
    // and is not published; the JWK published is the one of the PEM the MAC covers.
    const held = rows.filter((row) =>
      rowMacHolds({ secrets, log }, 'signing_key', row, row.mac, `${row.app_id}/${row.kid}`),
    )
    return Promise.all(
      held.map(async (row) => {
        const publicKey = await importSPKI(row.public_pem, ALG, { extractable: true })
        const publicJwk = { ...(await exportJWK(publicKey)), kid: row.kid, alg: ALG, use: 'sig' }
        return {
          kid: row.kid,
          status: row.status,
          publicJwk,
          publicPem: row.public_pem,
          publicKey,
          privateKey:
            row.status === 'current'
              ? ((await importJWK(
                  JSON.parse(secrets.decrypt(row.private_sealed)) as JWK,
                  ALG,
                )) as CryptoKey)
              : null,
        }
      }),
    )
  }

  function keys(appId: string): Promise<LoadedKey[]> {
    const now = Date.now()
    const entry = cache.get(appId)
    if (entry && now - entry.at < KEY_CACHE_MS) return entry.keys
    const loading = load(appId)
    cache.set(appId, { at: now, keys: loading })
    loading.catch(() => cache.delete(appId))
    return loading
  }

  async function current(appId: string): Promise<LoadedKey> {
    const key = (await keys(appId)).find((k) => k.status === 'current')
    if (!key) throw LatchError.of('missing_or_invalid_latch_app_id')
    return key
  }

  return {
    async ensureKeys(trxDb, appId) {
      const rows = await trxDb
        .selectFrom('signing_keys')
        .select('status')
        .where('app_id', '=', appId)
        .execute()
      if (!rows.some((r) => r.status === 'current')) await newKey(trxDb, appId, 'current')
      if (!rows.some((r) => r.status === 'next')) await newKey(trxDb, appId, 'next')
      cache.delete(appId)
    },
    async jwks(appId) {
      const list = await keys(appId)
      // Current first: a verifier that tries keys in order finds it at once.
      const ordered = [...list].sort(
        (a, b) => (a.status === 'current' ? -1 : 0) - (b.status === 'current' ? -1 : 0),
      )
      return { keys: ordered.map((k) => k.publicJwk) }
    },
    async verificationKey(appId) {
      return (await current(appId)).publicPem
    },
    async rotate(appId) {
      await db.transaction().execute(async (trx) => {
        // The key it replaces keeps verifying (and stays published) until the next rotation,
        // so tokens it signed live out their lifetime.
        await trx
          .updateTable('signing_keys')
          .set({ status: 'retired' })
          .where('app_id', '=', appId)
          .where('status', '=', 'previous')
          .execute()
        await trx
          .updateTable('signing_keys')
          .set({ status: 'previous' })
          .where('app_id', '=', appId)
          .where('status', '=', 'current')
          .execute()
        await trx
          .updateTable('signing_keys')
          .set({ status: 'current' })
          .where('app_id', '=', appId)
          .where('status', '=', 'next')
          .execute()
        await this.ensureKeys(trx, appId)
      })
      cache.delete(appId)
    },
    async signAccessToken(appId, userId, sessionId) {
      const key = await current(appId)
      if (!key.privateKey) throw new Error('Current signing key has no private part')
      const iat = Math.floor(clock.now().getTime() / 1000)
      return new SignJWT({ sid: sessionId })
        .setProtectedHeader({ alg: ALG, kid: key.kid, typ: 'JWT' })
        .setIssuer(opts.issuer)
        .setAudience(appId)
        .setSubject(userId)
        .setIssuedAt(iat)
        .setExpirationTime(iat + opts.accessTokenTtlS)
        .sign(key.privateKey)
    },
    async verifyAccessToken(appId, token) {
      const list = await keys(appId)
      let payload: JWTPayload
      try {
        const result = await jwtVerify(
          token,
          async (header) => {
            const key = list.find((k) => k.kid === header.kid)
            if (!key) throw new Error('Unknown key id')
            return key.publicKey
          },
          {
            issuer: opts.issuer,
            audience: appId,
            algorithms: [ALG],
            currentDate: clock.now(),
          },
        )
        payload = result.payload
      } catch (e) {
        throw LatchError.of('not_authenticated', { cause: e })
      }
      const { iss, aud, sub, sid, iat, exp } = payload
      if (
        typeof iss !== 'string' ||
        typeof aud !== 'string' ||
        typeof sub !== 'string' ||
        typeof sid !== 'string' ||
        typeof iat !== 'number' ||
        typeof exp !== 'number'
      ) {
        throw LatchError.of('not_authenticated')
      }
      return { iss, aud, sub, sid, iat, exp }
    },
  }
}
