import { expect, test } from 'vitest'
import { chainClient, chainRpcPath, nodeError, toReceipt } from './chain-client.ts'

test('behavior: a node receipt becomes a TransactionReceipt (before and after Byzantium)', () => {
  const raw = {
    to: '0x000000000000000000000000000000000000bEEF',
    from: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
    contractAddress: null,
    transactionIndex: '0x2',
    logsBloom: '0x00',
    blockHash: `0x${'ab'.repeat(32)}`,
    transactionHash: `0x${'cd'.repeat(32)}`,
    logs: [
      {
        address: '0x000000000000000000000000000000000000bEEF',
        topics: [`0x${'01'.repeat(32)}`],
        data: '0x',
        blockNumber: '0x10',
        transactionHash: `0x${'cd'.repeat(32)}`,
        transactionIndex: '0x2',
        blockHash: `0x${'ab'.repeat(32)}`,
        logIndex: '0x0',
        removed: false,
      },
    ],
    blockNumber: '0x10',
    type: '0x2',
    status: '0x1',
    gasUsed: '0x5208',
    cumulativeGasUsed: '0xa410',
    effectiveGasPrice: '0x3b9aca00',
  }
  expect(toReceipt(raw, 0x12)).toEqual({
    to: raw.to,
    from: raw.from,
    contractAddress: null,
    transactionIndex: 2,
    logsBloom: '0x00',
    blockHash: raw.blockHash,
    transactionHash: raw.transactionHash,
    logs: [{ ...raw.logs[0], blockNumber: 16, transactionIndex: 2, logIndex: 0 }],
    blockNumber: 16,
    confirmations: 3,
    byzantium: true,
    type: 2,
    status: 1,
    gasUsed: '21000',
    cumulativeGasUsed: '42000',
    effectiveGasPrice: '1000000000',
  })
  const { status: _status, ...old } = raw
  const before = toReceipt({ ...old, root: `0x${'ee'.repeat(32)}`, type: undefined }, 0x10)
  expect(before).toMatchObject({ byzantium: false, root: `0x${'ee'.repeat(32)}`, type: 0 })
  expect(before.status).toBeUndefined()
  expect(before.confirmations).toBe(1)
})

test('behavior: node errors become LatchErrors; insufficient funds is the catalogue one', () => {
  expect(
    nodeError({ code: -32000, message: 'insufficient funds for gas * price + value' }),
  ).toMatchObject({
    code: 'insufficient_funds',
    message: 'Insufficient funds for this transaction',
  })
  expect(nodeError({ code: -32000, message: 'nonce too low' })).toMatchObject({
    code: 'rpc_invalid_input',
    message: 'nonce too low',
  })
  expect(nodeError({ code: 3, message: 'execution reverted', data: '0x08c379a0' })).toMatchObject({
    code: 'rpc_internal',
    message: 'execution reverted',
    rpcCode: 3,
    details: '0x08c379a0',
  })
  expect(nodeError({ code: 3, message: 'x', data: { nested: true } }).details).toBeUndefined()
  expect(chainRpcPath(10)).toBe('/api/v1/chains/10/rpc')
})

test('behavior: fee data is EIP-1559 only where the latest block has a non-zero base fee, as ethers reads it', async () => {
  const fees = (baseFeePerGas: string | undefined) =>
    chainClient(async (method) => {
      if (method === 'eth_getBlockByNumber')
        return baseFeePerGas === undefined ? {} : { baseFeePerGas }
      if (method === 'eth_gasPrice') return '0x64'
      if (method === 'eth_maxPriorityFeePerGas') return '0xa'
      throw new Error(`unexpected ${method}`)
    }).feeData()
  expect(await fees('0x7')).toEqual({
    gasPrice: 100n,
    maxFeePerGas: 24n,
    maxPriorityFeePerGas: 10n,
  })
  for (const none of ['0x0', undefined]) {
    expect(await fees(none)).toEqual({
      gasPrice: 100n,
      maxFeePerGas: null,
      maxPriorityFeePerGas: null,
    })
  }
})
