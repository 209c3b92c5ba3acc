/**
 * The frame's batch signing against viem, an independent implementation: on generated batches
 * the EIP-712 digest, the signature and the signer viem recovers agree; on generated
 * authorizations the EIP-7702 signature is viem's byte for byte and recovers the account. Inputs
 * the frame must refuse are refused. fast-check with fixed seeds, so a failure repeats.
 */
import {
  BATCH_DOMAIN,
  BATCH_TYPES,
  DEFAULT_CHAIN_IDS,
  isLatchError,
  LATCH_DELEGATE_ADDRESS,
} from '@latch/shared'
import fc from 'fast-check'
import {
  bytesToHex,
  getAddress,
  type Hex,
  hashTypedData,
  hexToBytes,
  recoverTypedDataAddress,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { recoverAuthorizationAddress } from 'viem/utils'
import { describe, expect, test } from 'vitest'
import { authorizationDigest, batchDigest, checkBatch, MAX_BATCH_CALLS, signBatch } from './sign.ts'

const RUNS = 60

const key = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .filter((b) => b.some((x) => x !== 0) && b[0] !== 0xff)
const address = fc
  .uint8Array({ minLength: 20, maxLength: 20 })
  .map((b) => getAddress(bytesToHex(b)))
const uint256 = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n })
const call = fc.record({
  to: address,
  value: uint256.map((v) => v.toString()),
  data: fc.uint8Array({ minLength: 0, maxLength: 100 }).map((b) => bytesToHex(b)),
})
const chainId = fc.constantFrom(...DEFAULT_CHAIN_IDS)

function refusal(run: () => unknown): string {
  try {
    run()
  } catch (e) {
    if (isLatchError(e)) return e.code
    throw e
  }
  throw new Error('expected a refusal')
}

describe('batches against viem', () => {
  test(`${RUNS} generated batches: viem's digest, signature and signer`, async () => {
    await fc.assert(
      fc.asyncProperty(
        key,
        chainId,
        fc.array(call, { minLength: 1, maxLength: MAX_BATCH_CALLS }),
        uint256,
        fc.integer({ min: 1, max: 2 ** 40 }),
        async (k, chain, calls, nonce, deadline) => {
          const account = privateKeyToAccount(bytesToHex(k))
          const batch = checkBatch({
            chainId: chain,
            account: account.address,
            calls,
            nonce: nonce.toString(),
            deadline,
          })
          const typed = {
            domain: { ...BATCH_DOMAIN, chainId: chain, verifyingContract: account.address },
            types: BATCH_TYPES,
            primaryType: 'Batch',
            message: {
              calls: calls.map((c) => ({
                to: c.to,
                value: BigInt(c.value),
                data: c.data as Hex,
              })),
              nonce,
              deadline: BigInt(deadline),
            },
          } as const
          expect(batchDigest(batch)).toBe(hashTypedData(typed))
          const { signature, authorization } = signBatch(batch, null, k)
          expect(authorization).toBeUndefined()
          expect(signature).toBe(await account.signTypedData(typed))
          expect(await recoverTypedDataAddress({ ...typed, signature })).toBe(account.address)
        },
      ),
      { numRuns: RUNS, seed: 38_001 },
    )
  }, 120_000)

  test(`${RUNS} generated authorizations: viem's signature, to Latch's delegate only`, async () => {
    await fc.assert(
      fc.asyncProperty(
        key,
        chainId,
        fc.nat({ max: 2 ** 32 }),
        call,
        async (k, chain, txNonce, c) => {
          const account = privateKeyToAccount(bytesToHex(k))
          const batch = checkBatch({
            chainId: chain,
            account: account.address,
            calls: [c],
            nonce: '0',
            deadline: 1,
          })
          const { authorization } = signBatch(batch, { chainId: chain, nonce: txNonce }, k)
          const theirs = await account.signAuthorization({
            chainId: chain,
            address: LATCH_DELEGATE_ADDRESS,
            nonce: txNonce,
          })
          expect(authorization).toEqual({
            address: LATCH_DELEGATE_ADDRESS,
            chainId: chain,
            nonce: txNonce,
            r: theirs.r,
            s: theirs.s,
            yParity: theirs.yParity,
          })
          expect(
            await recoverAuthorizationAddress({
              authorization: { ...theirs, address: LATCH_DELEGATE_ADDRESS },
            }),
          ).toBe(account.address)
        },
      ),
      { numRuns: RUNS, seed: 38_002 },
    )
  }, 120_000)
})

describe('refusals', () => {
  const k = hexToBytes('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d')
  const account = privateKeyToAccount(bytesToHex(k)).address
  const to = '0x5FbDB2315678afecb367f032d93F642f64180aa3'
  const good = {
    chainId: 1,
    account,
    calls: [{ to, value: '0', data: '0x' }],
    nonce: '0',
    deadline: 1,
  }

  test.each([
    ['no calls', { calls: [] }],
    ['too many calls', { calls: Array.from({ length: MAX_BATCH_CALLS + 1 }, () => good.calls[0]) }],
    ['a wrong checksum', { calls: [{ to: to.replace('F', 'f'), value: '0', data: '0x' }] }],
    ['a value over 2^256-1', { calls: [{ to, value: (2n ** 256n).toString(), data: '0x' }] }],
    ['a negative value', { calls: [{ to, value: '-1', data: '0x' }] }],
    ['a fractional value', { calls: [{ to, value: '1.5', data: '0x' }] }],
    ['odd hex data', { calls: [{ to, value: '0', data: '0xabc' }] }],
    ['an unknown field', { calls: [{ to, value: '0', data: '0x', gas: '1' }] }],
    ['an unsupported chain', { chainId: 999_999_999 }],
    ['a nonce as a number', { nonce: 1 }],
    ['no deadline', { deadline: undefined }],
    ['an account that is no address', { account: '0x1234' }],
  ])('%s', (_, change) => {
    const code = refusal(() => checkBatch({ ...good, ...change }))
    expect(['invalid_request_arguments', 'unsupported_chain']).toContain(code)
  })

  test('an authorization for every chain (id 0), or for another chain than the batch', () => {
    const batch = checkBatch(good)
    expect(refusal(() => authorizationDigest({ chainId: 0, nonce: 0 }))).toBe(
      'invalid_request_arguments',
    )
    expect(refusal(() => signBatch(batch, { chainId: 8453, nonce: 0 }, k))).toBe(
      'invalid_request_arguments',
    )
  })
})
