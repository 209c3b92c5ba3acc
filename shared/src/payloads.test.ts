/**
 * The zod/mini schemas as a frame bundle sees them: this file imports payloads.ts alone (no
 * api.ts, so no full zod, which would install its English messages globally for every bundle).
 */
import { expect, test } from 'vitest'
import { config } from 'zod/mini'
import { signMessageOptionsSchema, walletRpcSchema } from './payloads.ts'

test('behavior: payloads.ts loads zod/mini only: no locale is installed by its module graph', () => {
  expect(config().localeError).toBeUndefined()
  expect(
    signMessageOptionsSchema.safeParse({ title: 'x'.repeat(1001) }).error?.issues[0],
  ).toMatchObject({
    path: ['title'],
    message: 'Invalid input',
  })
  const address = `0x${'ab'.repeat(20)}`
  expect(
    walletRpcSchema.safeParse({ address, accessToken: 't', request: { method: 'eth_chainId' } })
      .success,
  ).toBe(true)
  expect(
    walletRpcSchema.safeParse({ address, accessToken: '', request: { method: 'x' } }).success,
  ).toBe(false)
})
