import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ANVIL_ACCOUNTS, ANVIL_BALANCE_WEI, type RunningAnvil, startAnvil } from './anvil.ts'

describe('startAnvil', () => {
  let anvil: RunningAnvil
  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 8453 })
  }, 40_000)
  afterAll(async () => {
    await anvil?.stop()
  })

  it('answers the chain id it was asked for, with funded default accounts', async () => {
    expect(await anvil.rpc('eth_chainId')).toBe('0x2105')
    const balance = await anvil.rpc<string>('eth_getBalance', [ANVIL_ACCOUNTS[0].address, 'latest'])
    expect(BigInt(balance)).toBe(ANVIL_BALANCE_WEI)
  })

  it('refuses to be reached after stop', async () => {
    const other = await startAnvil({ chainId: 1 })
    await other.stop()
    await expect(other.rpc('eth_chainId')).rejects.toThrow()
  }, 40_000)
})
