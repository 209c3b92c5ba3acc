// @vitest-environment node
/**
 * The frame's RPC: signatures checked against viem (same key, same deterministic RFC 6979
 * signature, and the signer recovered), fee population against a real local chain (anvil, with
 * and without a base fee), and the whole path — the wallet's own key rebuilt from its shares by
 * the real API, chain reads through the API's proxy — ending in a transfer on chain.
 */
import {
  BATCH_DOMAIN,
  BATCH_TYPES,
  type ChainRpc,
  CLIENT_NAME,
  chainClient,
  type Hex,
  isLatchError,
  nodeError,
  proxyRpc,
} from '@latch/shared'
import { hexToBytes } from '@noble/hashes/utils.js'
import {
  type Address,
  encodeFunctionData,
  erc20Abi,
  parseTransaction,
  recoverMessageAddress,
  recoverTransactionAddress,
  recoverTypedDataAddress,
  type TransactionSerializable,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ANVIL_ACCOUNTS, type RunningAnvil, startAnvil } from '../../../server/src/testing/anvil.ts'
import { frameFetch } from '../../../server/src/testing/frame-fetch.ts'
import { startTestServer, type TestServer } from '../../../server/src/testing/test-server.ts'
import { batchDigest, checkBatch } from '../batch/sign.ts'
import { fetchApi, type ShareStore, walletCore } from '../wallet.ts'
import type { KeyHolder, RpcDeps } from './call.ts'
import { walletRpc } from './dispatch.ts'
import { typedDataDigest } from './typed-data.ts'

const OWNER = ANVIL_ACCOUNTS[0]
const viemAccount = privateKeyToAccount(OWNER.privateKey)
const TOKEN = 'test-token'

/** The key a wallet rebuilds from its shares, here a known one so viem can sign alike. */
function knownKey(hex: Hex): KeyHolder & { lastKey?: Uint8Array } {
  const holder: KeyHolder & { lastKey?: Uint8Array } = {
    async withKey(_params, use) {
      const key = hexToBytes(hex.slice(2))
      holder.lastKey = key
      try {
        return await use(key)
      } finally {
        key.fill(0)
      }
    },
  }
  return holder
}

function anvilRpc(url: string): ChainRpc {
  return async (method, params = []) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      signal: AbortSignal.timeout(10_000),
    })
    const body = (await res.json()) as {
      result?: unknown
      error?: { code: number; message: string }
    }
    if (body.error) throw nodeError(body.error)
    return body.result
  }
}

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p
  } catch (e) {
    if (isLatchError(e)) return { code: e.code, message: e.message }
    throw e
  }
  throw new Error('expected a refusal')
}

let anvil: RunningAnvil
let legacy: RunningAnvil

beforeAll(async () => {
  ;[anvil, legacy] = await Promise.all([
    startAnvil({ chainId: 1 }),
    startAnvil({ chainId: 137, legacy: true }),
  ])
}, 60_000)

afterAll(async () => {
  await Promise.all([anvil?.stop(), legacy?.stop()])
})

function rpcFor(holder: KeyHolder, address: Hex = OWNER.address) {
  const deps: RpcDeps = {
    wallet: holder,
    chain: (chainId) => chainClient(anvilRpc(chainId === 137 ? legacy.url : anvil.url)),
    defaultChainId: 1,
  }
  const rpc = walletRpc(deps)
  return (method: string, params?: unknown) =>
    rpc({ address, accessToken: TOKEN, request: { method, params } }).then((r) => r.response)
}

describe('eth_sign and personal_sign (EIP-191)', () => {
  it('signs UTF-8 text and hex bytes as viem does; the signature recovers the wallet', async () => {
    const holder = knownKey(OWNER.privateKey)
    const call = rpcFor(holder)
    const text = 'Sign in to Latch ✓'
    const signature = (await call('eth_sign', [OWNER.address, text])) as Hex
    expect(signature).toBe(await viemAccount.signMessage({ message: text }))
    expect(await recoverMessageAddress({ message: text, signature })).toBe(OWNER.address)
    const raw = '0xdeadbeef00'
    const bytes = (await call('eth_sign', [OWNER.address.toLowerCase(), raw])) as Hex
    expect(bytes).toBe(await viemAccount.signMessage({ message: { raw } }))
    // personal_sign names the message first.
    expect(await call('personal_sign', [text, OWNER.address])).toBe(signature)
    // The key is zeroed once the signature is made.
    expect(holder.lastKey?.every((b) => b === 0)).toBe(true)
  })

  it('error: another address, an empty message or missing params are refused', async () => {
    const call = rpcFor(knownKey(OWNER.privateKey))
    expect(await refusal(call('eth_sign', [ANVIL_ACCOUNTS[1].address, 'hi']))).toEqual({
      code: 'invalid_request_arguments',
      message: "eth_sign: the address is not this wallet's",
    })
    expect(await refusal(call('eth_sign', [OWNER.address, '']))).toEqual({
      code: 'invalid_sign_message',
      message: 'Message must be a non-empty string',
    })
    expect((await refusal(call('eth_sign', [OWNER.address, 42]))).code).toBe('invalid_sign_message')
    for (const params of [undefined, [], [OWNER.address], 'hello', { 0: OWNER.address }]) {
      expect(await refusal(call('eth_sign', params))).toEqual({
        code: 'invalid_request_arguments',
        message: 'eth_sign takes [address, message]',
      })
    }
  })
})

const MAIL = {
  domain: {
    name: 'Ether Mail',
    version: '1',
    chainId: 1,
    verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC',
  },
  types: {
    Person: [
      { name: 'name', type: 'string' },
      { name: 'wallet', type: 'address' },
    ],
    Mail: [
      { name: 'from', type: 'Person' },
      { name: 'to', type: 'Person[]' },
      { name: 'contents', type: 'string' },
      { name: 'attachments', type: 'bytes32[2]' },
    ],
  },
  primaryType: 'Mail',
  message: {
    from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
    to: [{ name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' }],
    contents: 'Hello, Bob!',
    attachments: [`0x${'11'.repeat(32)}`, `0x${'22'.repeat(32)}`],
  },
} as const

const ATTACKER = ANVIL_ACCOUNTS[1].address
const DEADLINE = 4_102_444_800
/** All the wallet's ETH and a token's balance to someone else. */
const DRAIN = [
  { to: ATTACKER, value: (10n ** 21n).toString(), data: '0x' },
  {
    to: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
    value: '0',
    data: encodeFunctionData({
      abi: erc20Abi,
      functionName: 'transfer',
      args: [ATTACKER, 10n ** 30n],
    }),
  },
]

/** A batch as the delegate's execute() hashes it (the batch code's own constants). */
function batchTypedData(name: string, verifyingContract: string) {
  return {
    types: { Batch: [...BATCH_TYPES.Batch], Call: [...BATCH_TYPES.Call] },
    primaryType: 'Batch' satisfies keyof typeof BATCH_TYPES,
    domain: { ...BATCH_DOMAIN, name, chainId: 1, verifyingContract },
    message: { calls: DRAIN, nonce: '0', deadline: DEADLINE },
  }
}

/** An ERC-2612 permit: the wallet is its owner, the token its verifying contract. */
const PERMIT = {
  domain: {
    name: 'USD Coin',
    version: '2',
    chainId: 1,
    verifyingContract: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
  },
  types: {
    Permit: [
      { name: 'owner', type: 'address' },
      { name: 'spender', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'nonce', type: 'uint256' },
      { name: 'deadline', type: 'uint256' },
    ],
  },
  primaryType: 'Permit',
  message: {
    owner: OWNER.address,
    spender: ATTACKER,
    value: 10n ** 30n,
    nonce: 0n,
    deadline: BigInt(DEADLINE),
  },
} as const

const DELEGATE_REFUSED = `eth_signTypedData_v4: a domain named ${BATCH_DOMAIN.name} is not signed here: batches are signed only in the wallet's own review`
const ACCOUNT_REFUSED =
  "eth_signTypedData_v4: the domain's verifyingContract is this wallet itself: data bound to the account is not signed here"

describe('eth_signTypedData_v4 (EIP-712)', () => {
  it('signs typed data, given as an object or as JSON, as viem does', async () => {
    const call = rpcFor(knownKey(OWNER.privateKey))
    const expected = await viemAccount.signTypedData(MAIL)
    expect(await call('eth_signTypedData_v4', [OWNER.address, MAIL])).toBe(expected)
    const withDomainType = {
      ...MAIL,
      types: {
        EIP712Domain: [
          { name: 'name', type: 'string' },
          { name: 'version', type: 'string' },
          { name: 'chainId', type: 'uint256' },
          { name: 'verifyingContract', type: 'address' },
        ],
        ...MAIL.types,
      },
    }
    const fromJson = (await call('eth_signTypedData_v4', [
      OWNER.address,
      JSON.stringify(withDomainType),
    ])) as Hex
    expect(fromJson).toBe(expected)
    expect(await recoverTypedDataAddress({ ...MAIL, signature: fromJson })).toBe(OWNER.address)
  })

  it('error: malformed typed data is a clear refusal, never a signature', async () => {
    const call = rpcFor(knownKey(OWNER.privateKey))
    expect(await refusal(call('eth_signTypedData_v4', [OWNER.address, '{not json']))).toEqual({
      code: 'invalid_request_arguments',
      message: 'eth_signTypedData_v4: the typed data is not valid JSON',
    })
    expect(
      (await refusal(call('eth_signTypedData_v4', [OWNER.address, { types: {} }]))).message,
    ).toBe('eth_signTypedData_v4: typed data needs types, primaryType, domain and message')
    const wrongValue = {
      ...MAIL,
      message: { ...MAIL.message, from: { name: 'x', wallet: 'nope' } },
    }
    const bad = await refusal(call('eth_signTypedData_v4', [OWNER.address, wrongValue]))
    expect(bad.code).toBe('invalid_request_arguments')
    expect(bad.message).toMatch(/^eth_signTypedData_v4: /)
    const unknownType = { ...MAIL, primaryType: 'Letter' }
    expect((await refusal(call('eth_signTypedData_v4', [OWNER.address, unknownType]))).code).toBe(
      'invalid_request_arguments',
    )
  })

  it('error: a batch of the wallet’s delegate (LatchDelegate, the wallet as verifying contract) is refused, nothing signed', async () => {
    const holder = knownKey(OWNER.privateKey)
    const call = rpcFor(holder)
    const batch = batchTypedData(BATCH_DOMAIN.name, OWNER.address)
    // The digest the batch code signs and the delegate's execute() checks: a real batch.
    expect(typedDataDigest(batch)).toBe(
      batchDigest(
        checkBatch({
          chainId: 1,
          account: OWNER.address,
          calls: DRAIN,
          nonce: '0',
          deadline: DEADLINE,
        }),
      ),
    )
    for (const params of [batch, JSON.stringify(batch)]) {
      expect(await refusal(call('eth_signTypedData_v4', [OWNER.address, params]))).toEqual({
        code: 'invalid_request_arguments',
        message: DELEGATE_REFUSED,
      })
    }
    expect(holder.lastKey).toBeUndefined()
  })

  it('error: a domain named LatchDelegate is refused whatever its verifying contract', async () => {
    const holder = knownKey(OWNER.privateKey)
    const call = rpcFor(holder)
    const other = batchTypedData(BATCH_DOMAIN.name, ATTACKER)
    const { verifyingContract: _, ...noContract } = other.domain
    for (const data of [
      other,
      { ...other, domain: noContract },
      { ...PERMIT, domain: other.domain },
    ]) {
      expect(await refusal(call('eth_signTypedData_v4', [OWNER.address, data]))).toEqual({
        code: 'invalid_request_arguments',
        message: DELEGATE_REFUSED,
      })
    }
    expect(holder.lastKey).toBeUndefined()
  })

  it('error: any domain with the wallet itself as verifying contract is refused, in any letter case', async () => {
    const holder = knownKey(OWNER.privateKey)
    const lower = OWNER.address.toLowerCase()
    const upper = `0x${OWNER.address.slice(2).toUpperCase()}`
    // The wallet's address as the call names it, checksummed or not.
    for (const account of [OWNER.address, lower as Hex]) {
      const call = rpcFor(holder, account)
      for (const verifyingContract of [OWNER.address, lower, upper]) {
        // A permit-like struct, and a batch under another delegate's name.
        for (const data of [
          { ...PERMIT, domain: { ...PERMIT.domain, verifyingContract } },
          batchTypedData('SomeLaterDelegate', verifyingContract),
        ]) {
          expect(await refusal(call('eth_signTypedData_v4', [account, data]))).toEqual({
            code: 'invalid_request_arguments',
            message: ACCOUNT_REFUSED,
          })
        }
      }
    }
    expect(holder.lastKey).toBeUndefined()
  })

  it('still signs typed data bound to another contract, the wallet named in the message only', async () => {
    const call = rpcFor(knownKey(OWNER.privateKey))
    const signature = (await call('eth_signTypedData_v4', [OWNER.address, PERMIT])) as Hex
    expect(signature).toBe(await viemAccount.signTypedData(PERMIT))
    expect(await recoverTypedDataAddress({ ...PERMIT, signature })).toBe(OWNER.address)
  })
})

describe('eth_signTransaction', () => {
  const to = ANVIL_ACCOUNTS[1].address
  const cases: [string, Record<string, unknown>, TransactionSerializable][] = [
    [
      'EIP-1559 (type 2)',
      {
        chainId: 10,
        nonce: 7,
        to,
        value: '0xde0b6b3a7640000',
        gasLimit: 21_000,
        maxFeePerGas: 30_000_000_000n,
        maxPriorityFeePerGas: '0x3b9aca00',
      },
      {
        type: 'eip1559',
        chainId: 10,
        nonce: 7,
        to,
        value: 10n ** 18n,
        gas: 21_000n,
        maxFeePerGas: 30_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
      },
    ],
    [
      'legacy with EIP-155 (type 0), contract creation with data',
      { chainId: 137, nonce: 0, data: '0x6080604052', gasLimit: '0x186a0', gasPrice: 1n, type: 0 },
      {
        type: 'legacy',
        chainId: 137,
        nonce: 0,
        data: '0x6080604052',
        gas: 100_000n,
        gasPrice: 1n,
      },
    ],
    [
      'EIP-2930 (type 1) with an access list',
      {
        chainId: 42161,
        nonce: 300,
        to,
        gasLimit: 50_000,
        gasPrice: 100,
        accessList: [{ address: to, storageKeys: [`0x${'00'.repeat(31)}01`] }],
      },
      {
        type: 'eip2930',
        chainId: 42161,
        nonce: 300,
        to,
        gas: 50_000n,
        gasPrice: 100n,
        accessList: [{ address: to, storageKeys: [`0x${'00'.repeat(31)}01`] }],
      },
    ],
  ]
  for (const [name, request, viemTx] of cases) {
    it(`serializes and signs ${name} as viem does`, async () => {
      const call = rpcFor(knownKey(OWNER.privateKey))
      const signed = (await call('eth_signTransaction', [
        { from: OWNER.address, ...request },
      ])) as Hex
      expect(signed).toBe(await viemAccount.signTransaction(viemTx))
      const parsed = parseTransaction(signed)
      expect(parsed.chainId).toBe(viemTx.chainId)
      expect(parsed.nonce).toBe(viemTx.nonce)
      expect(await recoverTransactionAddress({ serializedTransaction: signed as never })).toBe(
        OWNER.address as Address,
      )
    })
  }

  it('error: incomplete or inconsistent requests are refused with what is wrong', async () => {
    const call = rpcFor(knownKey(OWNER.privateKey))
    const base = { chainId: 1, nonce: 0, to: ANVIL_ACCOUNTS[1].address, gasLimit: 21_000 }
    const expectations: [unknown, string, string][] = [
      [
        [{ ...base }],
        'invalid_request_arguments',
        'Invalid transaction request: gasPrice is required to sign',
      ],
      [
        [{ ...base, gasPrice: 1, nonce: undefined }],
        'invalid_request_arguments',
        'Invalid transaction request: nonce is required to sign',
      ],
      [[{ ...base, gasPrice: 1, chainId: 31337 }], 'unsupported_chain', 'Unsupported chainId'],
      [
        [{ ...base, gasPrice: 1, chainId: '1' }],
        'invalid_request_arguments',
        'Invalid transaction request: chainId must be a number',
      ],
      [[{ ...base, gasPrice: 1, type: 3 }], 'unsupported_transaction', 'Unsupported transaction.'],
      [
        [{ ...base, gasPrice: 1, from: ANVIL_ACCOUNTS[1].address }],
        'invalid_request_arguments',
        "Invalid transaction request: from is not this wallet's address",
      ],
      [
        [{ ...base, gasPrice: 1, to: '0x1234' }],
        'invalid_request_arguments',
        'Invalid transaction request: to must be a 0x-prefixed 20-byte address',
      ],
      [
        [{ ...base, gasPrice: 1, data: '0xabc' }],
        'invalid_request_arguments',
        'Invalid transaction request: data must be 0x-prefixed hex bytes',
      ],
      [
        [{ ...base, gasPrice: -1 }],
        'invalid_request_arguments',
        'Invalid transaction request: gasPrice must be a number, bigint or hex string',
      ],
      [
        [{ ...base, gasPrice: `0x1${'0'.repeat(64)}` }],
        'invalid_request_arguments',
        'Invalid transaction request: gasPrice is too large',
      ],
      [
        [{ ...base, maxFeePerGas: 1, maxPriorityFeePerGas: 2 }],
        'invalid_request_arguments',
        'Invalid transaction request: maxPriorityFeePerGas is above maxFeePerGas',
      ],
      [
        [{ ...base, maxFeePerGas: 2, maxPriorityFeePerGas: 1, gasPrice: 1 }],
        'invalid_request_arguments',
        'Invalid transaction request: a type 2 transaction takes maxFeePerGas, not gasPrice',
      ],
      [
        [{ ...base, type: 0, maxFeePerGas: 2, gasPrice: 1 }],
        'invalid_request_arguments',
        'Invalid transaction request: a type 0 transaction takes gasPrice',
      ],
      [['0xf86c'], 'invalid_request_arguments', 'eth_signTransaction takes [transaction request]'],
      [undefined, 'invalid_request_arguments', 'eth_signTransaction takes [transaction request]'],
    ]
    for (const [params, code, message] of expectations) {
      expect(await refusal(call('eth_signTransaction', params)), JSON.stringify(params)).toEqual({
        code,
        message,
      })
    }
  })

  it('error: an unknown method is refused as unsupported', async () => {
    const call = rpcFor(knownKey(OWNER.privateKey))
    for (const method of ['eth_sendTransaction', 'eth_accounts', 'wallet_exportKey', '']) {
      expect(await refusal(call(method, []))).toEqual({
        code: 'rpc_unsupported_method',
        message: `The in-app wallet does not support ${method}`,
      })
    }
  })
})

describe('eth_populateTransactionRequest', () => {
  it('fills from, nonce, chain, gas and EIP-1559 fees as ethers v6 does, on a chain with a base fee', async () => {
    const call = rpcFor(knownKey(OWNER.privateKey))
    const chain = chainClient(anvilRpc(anvil.url))
    const populated = (await call('eth_populateTransactionRequest', [
      { to: ANVIL_ACCOUNTS[1].address, value: 1000 },
    ])) as Record<string, unknown>
    const block = (await anvil.rpc('eth_getBlockByNumber', ['latest', false])) as {
      baseFeePerGas: Hex
    }
    const priority = BigInt(await anvil.rpc<Hex>('eth_maxPriorityFeePerGas'))
    expect(populated).toEqual({
      from: OWNER.address,
      to: ANVIL_ACCOUNTS[1].address,
      value: '0x3e8',
      nonce: await chain.nonce(OWNER.address),
      gasLimit: '0x5208',
      chainId: 1,
      type: 2,
      maxPriorityFeePerGas: `0x${priority.toString(16)}`,
      maxFeePerGas: `0x${(BigInt(block.baseFeePerGas) * 2n + priority).toString(16)}`,
    })
    // As ethers v6: a bare gasPrice on an EIP-1559 chain serves as both fees.
    const withPrice = (await call('eth_populateTransactionRequest', [
      { to: ANVIL_ACCOUNTS[1].address, gasPrice: '0x77359400', chainId: 1 },
    ])) as Record<string, unknown>
    expect(withPrice).toMatchObject({
      type: 2,
      maxFeePerGas: '0x77359400',
      maxPriorityFeePerGas: '0x77359400',
    })
    expect(withPrice.gasPrice).toBeUndefined()
    // A legacy family asked for gets the chain's gas price.
    const asLegacy = (await call('eth_populateTransactionRequest', [
      { to: ANVIL_ACCOUNTS[1].address, type: 0 },
    ])) as Record<string, unknown>
    expect(asLegacy).toMatchObject({ type: 0, gasPrice: await anvil.rpc<Hex>('eth_gasPrice') })
    // Given fees are kept and the fee data is not needed.
    const given = (await call('eth_populateTransactionRequest', [
      { to: ANVIL_ACCOUNTS[1].address, maxFeePerGas: 5_000_000_000n, maxPriorityFeePerGas: 7 },
    ])) as Record<string, unknown>
    expect(given).toMatchObject({
      type: 2,
      maxFeePerGas: '0x12a05f200',
      maxPriorityFeePerGas: '0x7',
    })
    expect(
      await refusal(
        call('eth_populateTransactionRequest', [{ to: OWNER.address, type: 1, maxFeePerGas: 1 }]),
      ),
    ).toEqual({
      code: 'invalid_request_arguments',
      message: 'Invalid transaction request: a type 1 transaction takes gasPrice',
    })
    expect(
      (await refusal(call('eth_populateTransactionRequest', [{ to: OWNER.address, type: 4 }])))
        .code,
    ).toBe('unsupported_transaction')
  })

  it('uses the gas price on a chain without a base fee, and the result signs and lands', async () => {
    const call = rpcFor(knownKey(OWNER.privateKey))
    const populated = (await call('eth_populateTransactionRequest', [
      { to: ANVIL_ACCOUNTS[2].address, value: '0x10', chainId: 137 },
    ])) as Record<string, unknown>
    const gasPrice = await legacy.rpc<Hex>('eth_gasPrice')
    expect(populated).toMatchObject({ type: 0, gasPrice, chainId: 137, gasLimit: '0x5208' })
    expect(populated.maxFeePerGas).toBeUndefined()
    // An access list on that chain makes it EIP-2930.
    const key = `0x${'00'.repeat(32)}`
    const withList = (await call('eth_populateTransactionRequest', [
      {
        to: OWNER.address,
        chainId: 137,
        accessList: [{ address: OWNER.address, storageKeys: [key] }],
      },
    ])) as Record<string, unknown>
    expect(withList).toMatchObject({
      type: 1,
      gasPrice,
      accessList: [{ address: OWNER.address, storageKeys: [key] }],
    })
    const signed = (await call('eth_signTransaction', [populated])) as Hex
    const hash = await legacy.rpc<Hex>('eth_sendRawTransaction', [signed])
    const receipt = await chainClient(anvilRpc(legacy.url)).waitForReceipt(hash, {
      timeoutMs: 20_000,
      pollMs: 100,
    })
    expect(receipt).toMatchObject({ status: 1, type: 0, from: OWNER.address.toLowerCase() })
    // An EIP-1559 request on that chain is refused with the reason.
    expect(
      await refusal(
        call('eth_populateTransactionRequest', [{ chainId: 137, type: 2, to: OWNER.address }]),
      ),
    ).toEqual({
      code: 'invalid_request_arguments',
      message: 'This chain has no base fee: send a legacy transaction with gasPrice',
    })
  })

  it('error: a value over the balance is insufficient_funds; bad requests are refused', async () => {
    const poor = privateKeyToAccount(`0x${'42'.repeat(32)}`)
    const call = rpcFor(knownKey(`0x${'42'.repeat(32)}`), poor.address)
    expect(
      await refusal(call('eth_populateTransactionRequest', [{ to: OWNER.address, value: 1 }])),
    ).toEqual({ code: 'insufficient_funds', message: 'Insufficient funds for this transaction' })
    expect(
      await refusal(
        call('eth_populateTransactionRequest', [{ to: OWNER.address, chainId: 31337 }]),
      ),
    ).toEqual({ code: 'unsupported_chain', message: 'Unsupported chainId' })
    expect(
      await refusal(call('eth_populateTransactionRequest', [{ from: OWNER.address }])),
    ).toEqual({
      code: 'invalid_request_arguments',
      message: "Invalid transaction request: from is not this wallet's address",
    })
  })
})

describe('eth_populateTransactionRequest, fees against a node that suggests them', () => {
  /** A chain whose node suggests a 5 gwei tip and has a base fee of 10 gwei (max fee 25 gwei). */
  const node = (baseFee: bigint | null) =>
    ({
      nonce: async () => 3,
      estimateGas: async () => 21_000n,
      balance: async () => 10n ** 21n,
      feeData: async () => ({
        gasPrice: 7n,
        maxFeePerGas: baseFee === null ? null : baseFee * 2n + 5n * 10n ** 9n,
        maxPriorityFeePerGas: baseFee === null ? null : 5n * 10n ** 9n,
      }),
    }) as unknown as ReturnType<RpcDeps['chain']>
  const populate = (request: Record<string, unknown>, baseFee: bigint | null = 10n ** 10n) =>
    walletRpc({
      wallet: knownKey(OWNER.privateKey),
      chain: () => node(baseFee),
      defaultChainId: 1,
    })({
      address: OWNER.address,
      accessToken: TOKEN,
      request: { method: 'eth_populateTransactionRequest', params: [request] },
    }).then((r) => r.response as Record<string, unknown>)
  const to = '0x000000000000000000000000000000000000bEEF'

  it('keeps a tip the request names; lowers only the node’s suggestion to a given max fee', async () => {
    const named = await populate({ to, maxFeePerGas: 100n, maxPriorityFeePerGas: 100n })
    expect(named).toMatchObject({ type: 2, maxFeePerGas: '0x64', maxPriorityFeePerGas: '0x64' })
    const suggested = await populate({ to, maxFeePerGas: 100n })
    expect(suggested).toMatchObject({ type: 2, maxFeePerGas: '0x64', maxPriorityFeePerGas: '0x64' })
    const under = await populate({ to, maxFeePerGas: 10n ** 11n })
    expect(under.maxPriorityFeePerGas).toBe('0x12a05f200')
  })

  it('error: a named tip above the named max fee is refused, not lowered', async () => {
    expect(await refusal(populate({ to, maxFeePerGas: 100n, maxPriorityFeePerGas: 101n }))).toEqual(
      {
        code: 'invalid_request_arguments',
        message: 'Invalid transaction request: maxPriorityFeePerGas is above maxFeePerGas',
      },
    )
  })

  it('error: unknown fields, a coercible type and a wrong checksum are refused before any read', async () => {
    for (const bad of [
      { to, authorizationList: [] },
      { to, input: '0x' },
      { to, type: true },
      { to, type: '2.0' },
      { to: '0x000000000000000000000000000000000000BEEF'.replace('BEEF', 'BeEF') },
      { to, accessList: [], type: 0 },
    ]) {
      expect((await refusal(populate(bad))).code, JSON.stringify(bad)).toBe(
        'invalid_request_arguments',
      )
    }
  })
})

describe('the whole path: shares rebuilt by the real API, reads through its proxy', () => {
  let started: { server: TestServer; close(): Promise<void> }
  beforeAll(async () => {
    started = await startTestServer('pglite', 'memory://')
  }, 60_000)
  afterAll(async () => {
    await started?.close()
  })

  it('creates a wallet, funds it, populates, signs and sends a transfer that lands', async () => {
    const s = started.server
    const app = await s.newApp({ rpcUrls: { '1': anvil.url } })
    const auth = await s.emailLogin(app.id, `rpc.${Date.now()}@example.com`)
    const fetcher = frameFetch(s)
    const shares = new Map<string, Uint8Array>()
    const store: ShareStore = {
      persistent: false,
      get: (a) => shares.get(a.toLowerCase()),
      set: (a, share) => void shares.set(a.toLowerCase(), share),
    }
    const core = walletCore({ api: fetchApi('', app.id, fetcher), store })
    const { address } = await core.create({ accessToken: auth.token })
    let seenKey: Uint8Array | undefined
    const wallet: KeyHolder = {
      withKey: (p, use) =>
        core.withKey(p, (key) => {
          seenKey = key
          return use(key)
        }),
    }
    const rpc = walletRpc({
      wallet,
      chain: (chainId, accessToken) =>
        chainClient(
          proxyRpc({
            apiUrl: '',
            appId: app.id,
            chainId,
            accessToken,
            clientName: CLIENT_NAME,
            fetcher,
          }),
        ),
      defaultChainId: 1,
    })
    const call = (method: string, params: unknown) =>
      rpc({ address, accessToken: auth.token, request: { method, params } }).then((r) => r.response)

    // Funded by an anvil account.
    const funder = privateKeyToAccount(ANVIL_ACCOUNTS[1].privateKey)
    const chain = chainClient(anvilRpc(anvil.url))
    const fund = await funder.signTransaction({
      chainId: 1,
      to: address,
      value: 10n ** 18n,
      nonce: await chain.nonce(funder.address),
      gas: 21_000n,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 10n ** 9n,
    })
    await chain.waitForReceipt(await chain.sendRawTransaction(fund), {
      timeoutMs: 20_000,
      pollMs: 100,
    })

    const signature = (await call('eth_sign', [address, 'hello from the in-app wallet'])) as Hex
    expect(
      await recoverMessageAddress({ message: 'hello from the in-app wallet', signature }),
    ).toBe(address)
    expect(seenKey?.every((b) => b === 0)).toBe(true)

    const to: Hex = '0x000000000000000000000000000000000000bEEF'
    const before = await chain.balance(to)
    const populated = await call('eth_populateTransactionRequest', [
      { to, value: '0x2386f26fc10000' },
    ])
    const signed = (await call('eth_signTransaction', [populated])) as Hex
    expect(await recoverTransactionAddress({ serializedTransaction: signed as never })).toBe(
      address,
    )
    const proxied = chainClient(
      proxyRpc({
        apiUrl: '',
        appId: app.id,
        chainId: 1,
        accessToken: auth.token,
        clientName: CLIENT_NAME,
        fetcher,
      }),
    )
    const hash = await proxied.sendRawTransaction(signed)
    const receipt = await proxied.waitForReceipt(hash, { timeoutMs: 20_000, pollMs: 100 })
    expect(receipt).toMatchObject({ status: 1, from: address.toLowerCase(), to: to.toLowerCase() })
    expect(await chain.balance(to)).toBe(before + 10n ** 16n)
    expect(await chain.balance(address)).toBeLessThan(10n ** 18n - 10n ** 16n)

    // A wallet not on this device cannot sign: the key needs the device share.
    shares.clear()
    expect(await refusal(call('eth_sign', [address, 'again']))).toMatchObject({
      code: 'wallet_not_on_device',
    })
  }, 60_000)
})

describe('eth_signTransaction, property', () => {
  it('any well-formed request signs to the bytes viem produces for it', async () => {
    const call = rpcFor(knownKey(OWNER.privateKey))
    const { default: fc } = await import('fast-check')
    const uint = (bits: number) => fc.bigInt({ min: 0n, max: (1n << BigInt(bits)) - 1n })
    const bytes = fc
      .uint8Array({ maxLength: 80 })
      .map((b) => `0x${Buffer.from(b).toString('hex')}` as Hex)
    const address = fc
      .uint8Array({ minLength: 20, maxLength: 20 })
      .map((b) => `0x${Buffer.from(b).toString('hex')}` as Hex)
    const chainId = fc.constantFrom(1, 10, 137, 42161, 314159, 84531)
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          type: fc.constantFrom(0, 1, 2),
          chainId,
          nonce: fc.integer({ min: 0, max: 2 ** 40 }),
          gas: uint(64),
          value: uint(256),
          fee: uint(128),
          tip: uint(64),
          to: fc.option(address, { nil: undefined }),
          data: bytes,
          keys: fc.array(fc.uint8Array({ minLength: 32, maxLength: 32 }), { maxLength: 2 }),
        }),
        async (t) => {
          const accessList = t.keys.length
            ? [
                {
                  address: OWNER.address,
                  storageKeys: t.keys.map((k) => `0x${Buffer.from(k).toString('hex')}` as Hex),
                },
              ]
            : []
          const maxFee = t.fee + t.tip
          const request = {
            type: t.type,
            chainId: t.chainId,
            nonce: t.nonce,
            gasLimit: t.gas,
            value: t.value,
            data: t.data,
            ...(t.to && { to: t.to }),
            ...(t.type === 2
              ? { maxFeePerGas: maxFee, maxPriorityFeePerGas: t.tip }
              : { gasPrice: t.fee }),
            ...(t.type !== 0 && { accessList }),
          }
          const common = {
            chainId: t.chainId,
            nonce: t.nonce,
            gas: t.gas,
            value: t.value,
            data: t.data,
            to: t.to,
          }
          const viemTx: TransactionSerializable =
            t.type === 2
              ? {
                  ...common,
                  type: 'eip1559',
                  maxFeePerGas: maxFee,
                  maxPriorityFeePerGas: t.tip,
                  accessList,
                }
              : t.type === 1
                ? { ...common, type: 'eip2930', gasPrice: t.fee, accessList }
                : { ...common, type: 'legacy', gasPrice: t.fee }
          expect(await call('eth_signTransaction', [request])).toBe(
            await viemAccount.signTransaction(viemTx),
          )
        },
      ),
      { numRuns: 150, seed: 20_261_123 },
    )
  })
})
