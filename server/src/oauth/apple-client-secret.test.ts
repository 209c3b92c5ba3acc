import { exportPKCS8, generateKeyPair, jwtVerify } from 'jose'
import { beforeAll, describe, expect, test } from 'vitest'
import { APPLE_SECRET_MAX_LIFETIME_S, appleClientSecret } from './apple-client-secret.ts'

let p8: string
let publicKey: CryptoKey

beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true })
  p8 = await exportPKCS8(pair.privateKey)
  publicKey = pair.publicKey
})

describe('appleClientSecret', () => {
  test('behavior: an ES256 JWT with iss team id, sub client id, aud Apple, kid the key id', async () => {
    const now = Math.floor(Date.now() / 1000)
    const jwt = await appleClientSecret(
      'com.example.web',
      { teamId: 'TEAM123456', keyId: 'KEY1234567', privateKey: p8 },
      now,
    )
    const { payload, protectedHeader } = await jwtVerify(jwt, publicKey, {
      issuer: 'TEAM123456',
      subject: 'com.example.web',
      audience: 'https://appleid.apple.com',
      algorithms: ['ES256'],
    })
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: 'KEY1234567' })
    expect(payload.iat).toBe(now)
    expect(payload.exp).toBeGreaterThan(now)
    expect((payload.exp ?? 0) - now).toBeLessThanOrEqual(APPLE_SECRET_MAX_LIFETIME_S)
  })

  test('param: at most 6 months of life', async () => {
    const key = { teamId: 'T', keyId: 'K', privateKey: p8 }
    await expect(appleClientSecret('c', key, 0, APPLE_SECRET_MAX_LIFETIME_S)).resolves.toBeTruthy()
    await expect(appleClientSecret('c', key, 0, APPLE_SECRET_MAX_LIFETIME_S + 1)).rejects.toThrow(
      RangeError,
    )
  })

  test('error: a key that is not a P-256 PKCS#8 PEM', async () => {
    await expect(
      appleClientSecret('c', { teamId: 'T', keyId: 'K', privateKey: 'not a key' }),
    ).rejects.toMatchObject({ code: 'method_not_available' })
  })
})
