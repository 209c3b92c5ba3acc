import { SIWE_STATEMENT } from '@latch/shared'
import fc from 'fast-check'
import { getAddress } from 'viem'
import { createSiweMessage } from 'viem/siwe'
import { expect, test } from 'vitest'
import { firstAccount } from './eip1193.ts'
import { SIWE_MESSAGE_LIFETIME_MS, siweMessage } from './siwe.ts'

const ADDRESS = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'

test('behavior: the SIWE message is EIP-4361 exactly as viem writes it, for generated pages, chains, nonces and times', () => {
  fc.assert(
    fc.property(
      fc.webUrl({ withQueryParameters: true, withFragments: true }),
      fc.uint8Array({ minLength: 20, maxLength: 20 }),
      fc.integer({ min: 1, max: 2 ** 40 }),
      fc.stringMatching(/^[a-zA-Z0-9]{8,24}$/),
      fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }),
      (pageUrl, bytes, chainId, nonce, now) => {
        const url = new URL(pageUrl)
        const address = getAddress(`0x${Buffer.from(bytes).toString('hex')}`)
        const ours = siweMessage({
          pageUrl,
          address: address.toLowerCase() as `0x${string}`,
          chainId,
          nonce,
          now,
        })
        expect(ours).toBe(
          createSiweMessage({
            domain: url.host,
            address,
            statement: SIWE_STATEMENT,
            uri: `${url.origin}${url.pathname}${url.search}`,
            version: '1',
            chainId,
            nonce,
            issuedAt: now,
            expirationTime: new Date(now.getTime() + SIWE_MESSAGE_LIFETIME_MS),
          }),
        )
        expect(ours).not.toContain('#')
      },
    ),
    { numRuns: 300, seed: 21_005 },
  )
})

test('error: a wrong checksum, a short nonce or a bad chain id writes no message', () => {
  const fields = {
    pageUrl: 'https://shop.example/cart',
    address: ADDRESS,
    chainId: 1,
    nonce: 'abcdefgh1',
    now: new Date(0),
  } as const
  expect(() => siweMessage({ ...fields })).not.toThrow()
  expect(() =>
    siweMessage({ ...fields, address: '0xF39Fd6e51aad88F6F4ce6aB8827279cffFb92266' }),
  ).toThrow()
  expect(() => siweMessage({ ...fields, nonce: 'abc' })).toThrow('nonce')
  expect(() => siweMessage({ ...fields, chainId: 0 })).toThrow('chain id')
})

test("behavior: a wallet's first account, lower case or checksummed, comes back checksummed; anything else is not connected", () => {
  expect(firstAccount([ADDRESS.toLowerCase()])).toBe(ADDRESS)
  expect(firstAccount([ADDRESS, '0x0'])).toBe(ADDRESS)
  for (const bad of [[], ['0xF39Fd6e51aad88F6F4ce6aB8827279cffFb92266'], ['0x1234'], [42], null]) {
    expect(() => firstAccount(bad), JSON.stringify(bad)).toThrow(
      expect.objectContaining({ code: 'wallet_not_connected' }),
    )
  }
})
