/**
 * Latch's delegate on anvil (Prague rules): compiled from source and compared with the checked-in
 * artifact, deployed at its deterministic address, then driven as the sponsor drives it: a type-4
 * transaction from another account whose authorization list carries the visitor's delegation.
 * The visitor's account never holds ETH.
 */
import {
  BATCH_DOMAIN,
  BATCH_TYPES,
  DETERMINISTIC_DEPLOYER,
  LATCH_DELEGATE_ADDRESS,
} from '@latch/shared'
import {
  type Abi,
  BaseError,
  createPublicClient,
  createWalletClient,
  decodeErrorResult,
  defineChain,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  type Hex,
  hashTypedData,
  http,
  keccak256,
  type PrivateKeyAccount,
  parseSignature,
  serializeSignature,
  toHex,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ANVIL_ACCOUNTS, type RunningAnvil, startAnvil } from '../testing/anvil.ts'
import { latchCli } from '../testing/cli.ts'
import { type Compiled, compile, compileDelegate } from './contracts/compile.ts'
import { TEST_CONTRACTS } from './contracts/test/artifact.ts'
import { LATCH_DELEGATE_ABI, LATCH_DELEGATE_BYTECODE } from './delegate-artifact.ts'
import { DeployError, delegateAddress, deployDelegate } from './deploy.ts'

const CHAIN_ID = 31337
const abi = LATCH_DELEGATE_ABI as Abi

interface Call {
  to: Hex
  value: bigint
  data: Hex
}

let anvil: RunningAnvil
let contracts: Record<string, Compiled>
let delegate: Compiled
const chain = defineChain({
  id: CHAIN_ID,
  name: 'anvil',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['http://127.0.0.1'] } },
})
const sponsor = privateKeyToAccount(ANVIL_ACCOUNTS[0].privateKey)
let client: ReturnType<typeof createPublicClient>
let sponsorWallet: ReturnType<typeof createWalletClient>
let token: Hex
let spender: Hex
let reenterer: Hex

beforeAll(async () => {
  ;[anvil, contracts, delegate] = await Promise.all([
    startAnvil({ chainId: CHAIN_ID, hardfork: 'prague' }),
    Promise.resolve().then(() => compile(['test/TestToken.sol'])),
    Promise.resolve().then(() => compileDelegate()),
  ])
  const transport = http(anvil.url)
  client = createPublicClient({ chain, transport })
  sponsorWallet = createWalletClient({ account: sponsor, chain, transport })
  const deployTest = async (name: string): Promise<Hex> => {
    const c = contracts[name]
    if (!c) throw new Error(`no ${name}`)
    const hash = await sponsorWallet.deployContract({
      abi: c.abi,
      bytecode: c.bytecode,
      account: sponsor,
      chain,
    })
    const receipt = await client.waitForTransactionReceipt({ hash })
    if (!receipt.contractAddress) throw new Error(`${name} not deployed`)
    return receipt.contractAddress
  }
  token = await deployTest('TestToken')
  spender = await deployTest('TestSpender')
  reenterer = await deployTest('TestReenterer')
}, 60_000)

afterAll(async () => {
  await anvil?.stop()
})

const tokenAbi = () => contracts.TestToken?.abi as Abi

function batchDigest(
  account: Hex,
  calls: Call[],
  nonce: bigint,
  deadline: bigint,
  chainId = CHAIN_ID,
) {
  return hashTypedData({
    domain: { ...BATCH_DOMAIN, chainId, verifyingContract: account },
    types: BATCH_TYPES,
    primaryType: 'Batch',
    message: { calls, nonce, deadline },
  })
}

async function signBatch(
  signer: PrivateKeyAccount,
  account: Hex,
  calls: Call[],
  nonce: bigint,
  deadline: bigint,
  chainId = CHAIN_ID,
): Promise<Hex> {
  return signer.signTypedData({
    domain: { ...BATCH_DOMAIN, chainId, verifyingContract: account },
    types: BATCH_TYPES,
    primaryType: 'Batch',
    message: { calls, nonce, deadline },
  })
}

const executeData = (calls: Call[], nonce: bigint, deadline: bigint, signature: Hex) =>
  encodeFunctionData({ abi, functionName: 'execute', args: [calls, nonce, deadline, signature] })

async function now(): Promise<bigint> {
  return (await client.getBlock()).timestamp
}

/** The custom error a call reverts with ('revert' without one), or null when it succeeds. */
async function revertOf(to: Hex, data: Hex): Promise<string | null> {
  try {
    await client.call({ account: sponsor.address, to, data })
    return null
  } catch (e) {
    if (!(e instanceof BaseError)) throw e
    const raw = e.walk((x) => typeof (x as { data?: unknown }).data === 'string') as {
      data?: Hex
    } | null
    if (!raw?.data || raw.data === '0x') return 'revert'
    return decodeErrorResult({ abi, data: raw.data }).errorName
  }
}

const nonceOf = (account: Hex) =>
  client.readContract({ address: account, abi, functionName: 'batchNonce' }) as Promise<bigint>

const balanceOf = (who: Hex) =>
  client.readContract({
    address: token,
    abi: tokenAbi(),
    functionName: 'balanceOf',
    args: [who],
  }) as Promise<bigint>

const approve = (to: Hex, value: bigint): Call => ({
  to: token,
  value: 0n,
  data: encodeFunctionData({ abi: tokenAbi(), functionName: 'approve', args: [to, value] }),
})
const transfer = (to: Hex, value: bigint): Call => ({
  to: token,
  value: 0n,
  data: encodeFunctionData({ abi: tokenAbi(), functionName: 'transfer', args: [to, value] }),
})

describe('the compiled delegate', () => {
  test('the checked-in artifact is what the source compiles to, at the shared address', () => {
    expect(delegate.bytecode).toBe(LATCH_DELEGATE_BYTECODE)
    expect(delegate.abi).toEqual(LATCH_DELEGATE_ABI)
    expect(delegateAddress(delegate.bytecode)).toBe(getAddress(LATCH_DELEGATE_ADDRESS))
  })

  test('the checked-in test contracts (the demo token among them) are what their source compiles to', () => {
    expect(Object.keys(TEST_CONTRACTS).sort()).toEqual(Object.keys(contracts).sort())
    expect(TEST_CONTRACTS).toEqual(contracts)
  })

  test('its storage slots are ERC-7201 namespaces', async () => {
    const { readFileSync } = await import('node:fs')
    const source = readFileSync(new URL('./contracts/LatchDelegate.sol', import.meta.url), 'utf8')
    for (const [constant, id] of [
      ['NONCE_SLOT', 'latch.delegate.nonce'],
      ['LOCK_SLOT', 'latch.delegate.lock'],
    ] as const) {
      const base = BigInt(keccak256(toHex(id))) - 1n
      const slot = BigInt(keccak256(encodeAbiParameters([{ type: 'uint256' }], [base]))) & ~0xffn
      expect(source).toContain(`${constant} = ${toHex(slot, { size: 32 })}`)
    }
  })
})

describe('deployment (latch delegate deploy)', () => {
  const env = { DEPLOYER_KEY: ANVIL_ACCOUNTS[1].privateKey }

  test('lands at the deterministic address through the proxy, once', async () => {
    expect(await client.getCode({ address: DETERMINISTIC_DEPLOYER })).toBeTruthy()
    const args = ['delegate', 'deploy', '--chain', String(CHAIN_ID), '--rpc-url', anvil.url]
    const first = await latchCli(env, ...args, '--key-env', 'DEPLOYER_KEY', '--json')
    expect(first.code, first.err).toBe(0)
    const result = JSON.parse(first.out) as { address: Hex; transactionHash: Hex | null }
    expect(result.address).toBe(getAddress(LATCH_DELEGATE_ADDRESS))
    expect(result.transactionHash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(await client.getCode({ address: result.address })).toBeTruthy()
    const again = await latchCli(env, ...args, '--key-env', 'DEPLOYER_KEY')
    expect(again.code, again.err).toBe(0)
    expect(again.out).toContain(`already deployed on chain ${CHAIN_ID} at ${result.address}`)
    expect((await latchCli({}, 'delegate', 'address')).out.trim()).toBe(LATCH_DELEGATE_ADDRESS)
  })

  test('refuses a missing key, a bad key and a node that serves another chain', async () => {
    const to = ['--rpc-url', anvil.url]
    const noKey = await latchCli(env, 'delegate', 'deploy', '--chain', String(CHAIN_ID), ...to)
    expect(noKey.code).toBe(2)
    expect(noKey.err).toContain('exactly one of --key-file, --key-env and --app')
    const bad = await latchCli(
      { K: 'nope' },
      ...['delegate', 'deploy', '--chain', String(CHAIN_ID), ...to, '--key-env', 'K'],
    )
    expect(bad.code).toBe(2)
    expect(bad.err).toContain('not 32 bytes of hex')
    const wrong = await latchCli(
      env,
      ...['delegate', 'deploy', '--chain', '1', ...to, '--key-env', 'DEPLOYER_KEY'],
    )
    expect(wrong.code).toBe(1)
    expect(wrong.err).toContain(`serves chain ${CHAIN_ID}, not 1`)
    await expect(
      deployDelegate({ rpcUrl: anvil.url, chainId: 1, privateKey: ANVIL_ACCOUNTS[1].privateKey }),
    ).rejects.toThrow(DeployError)
  })
})

describe('batches', () => {
  // One visitor for the file: delegated by the first batch, which the sponsor pays.
  const visitorKey = generatePrivateKey()
  const visitor = privateKeyToAccount(visitorKey)
  const account = visitor.address
  const recipient = privateKeyToAccount(generatePrivateKey()).address

  /** Sends `data` to the account from the sponsor; resolves with the receipt's status. */
  async function sponsorSends(data: Hex, authorize = false): Promise<'success' | 'reverted'> {
    const authorizationList = authorize
      ? [
          await visitor.signAuthorization({
            chainId: CHAIN_ID,
            address: LATCH_DELEGATE_ADDRESS,
            nonce: await client.getTransactionCount({ address: account }),
          }),
        ]
      : undefined
    const hash = await sponsorWallet.sendTransaction({
      account: sponsor,
      chain,
      to: account,
      data,
      gas: 500_000n,
      ...(authorizationList && { authorizationList }),
    })
    return (await client.waitForTransactionReceipt({ hash })).status
  }

  test('an approve+transfer batch runs from the visitor account, the sponsor paying', async () => {
    await sponsorWallet.writeContract({
      account: sponsor,
      chain,
      address: token,
      abi: tokenAbi(),
      functionName: 'mint',
      args: [account, 1000n],
    })
    expect(await client.getBalance({ address: account })).toBe(0n)
    const calls = [approve(spender, 300n), transfer(recipient, 100n)]
    const deadline = (await now()) + 600n
    const signature = await signBatch(visitor, account, calls, 0n, deadline)
    expect(await sponsorSends(executeData(calls, 0n, deadline, signature), true)).toBe('success')

    // The account now runs the delegate's code: 0xef0100 ++ address.
    expect((await client.getCode({ address: account }))?.toLowerCase()).toBe(
      `0xef0100${LATCH_DELEGATE_ADDRESS.slice(2).toLowerCase()}`,
    )
    expect(await balanceOf(recipient)).toBe(100n)
    expect(await balanceOf(account)).toBe(900n)
    expect(
      await client.readContract({
        address: token,
        abi: tokenAbi(),
        functionName: 'allowance',
        args: [account, spender],
      }),
    ).toBe(300n)
    expect(await nonceOf(account)).toBe(1n)
    expect(await client.getBalance({ address: account })).toBe(0n)

    // The contract's digest is the EIP-712 digest viem computes.
    expect(
      await client.readContract({
        address: account,
        abi,
        functionName: 'batchDigest',
        args: [calls, 5n, deadline],
      }),
    ).toBe(batchDigest(account, calls, 5n, deadline))
  })

  test('replaying a batch is refused (its nonce is spent)', async () => {
    const calls = [transfer(recipient, 1n)]
    const nonce = await nonceOf(account)
    const deadline = (await now()) + 600n
    const data = executeData(
      calls,
      nonce,
      deadline,
      await signBatch(visitor, account, calls, nonce, deadline),
    )
    expect(await sponsorSends(data)).toBe('success')
    expect(await revertOf(account, data)).toBe('BadNonce')
    expect(await sponsorSends(data)).toBe('reverted')
    expect(await nonceOf(account)).toBe(nonce + 1n)
  })

  test('a nonce ahead of the account is refused', async () => {
    const calls = [transfer(recipient, 1n)]
    const nonce = (await nonceOf(account)) + 1n
    const deadline = (await now()) + 600n
    const data = executeData(
      calls,
      nonce,
      deadline,
      await signBatch(visitor, account, calls, nonce, deadline),
    )
    expect(await revertOf(account, data)).toBe('BadNonce')
  })

  test('a batch signed for another chain is refused', async () => {
    const calls = [transfer(recipient, 1n)]
    const nonce = await nonceOf(account)
    const deadline = (await now()) + 600n
    const signature = await signBatch(visitor, account, calls, nonce, deadline, 1)
    expect(await revertOf(account, executeData(calls, nonce, deadline, signature))).toBe(
      'BadSignature',
    )
  })

  test('a batch past its deadline is refused', async () => {
    const calls = [transfer(recipient, 1n)]
    const nonce = await nonceOf(account)
    const deadline = (await now()) - 1n
    const signature = await signBatch(visitor, account, calls, nonce, deadline)
    expect(await revertOf(account, executeData(calls, nonce, deadline, signature))).toBe('Expired')
  })

  test('a batch signed by another key is refused, as is one altered after signing', async () => {
    const other = privateKeyToAccount(generatePrivateKey())
    const calls = [transfer(recipient, 1n)]
    const nonce = await nonceOf(account)
    const deadline = (await now()) + 600n
    const signed = await signBatch(other, account, calls, nonce, deadline)
    expect(await revertOf(account, executeData(calls, nonce, deadline, signed))).toBe(
      'BadSignature',
    )
    const mine = await signBatch(visitor, account, calls, nonce, deadline)
    const altered = [transfer(recipient, 2n)]
    expect(await revertOf(account, executeData(altered, nonce, deadline, mine))).toBe(
      'BadSignature',
    )
    // The same signature for another account's batch (domain: verifyingContract) is refused.
    const otherAccount = privateKeyToAccount(generatePrivateKey())
    const forOther = await signBatch(visitor, otherAccount.address, calls, nonce, deadline)
    expect(await revertOf(account, executeData(calls, nonce, deadline, forOther))).toBe(
      'BadSignature',
    )
  })

  test('the malleable twin of a valid signature is refused', async () => {
    const calls = [transfer(recipient, 1n)]
    const nonce = await nonceOf(account)
    const deadline = (await now()) + 600n
    const sig = parseSignature(await signBatch(visitor, account, calls, nonce, deadline))
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
    const twin = serializeSignature({
      r: sig.r,
      s: toHex(n - BigInt(sig.s), { size: 32 }),
      yParity: sig.yParity === 0 ? 1 : 0,
    })
    expect(await revertOf(account, executeData(calls, nonce, deadline, twin))).toBe('BadSignature')
  })

  test('a reentrant execute is refused and the whole batch reverts', async () => {
    const nonce = await nonceOf(account)
    const deadline = (await now()) + 600n
    // The inner batch is validly signed with the next nonce: only the lock stops it.
    const inner = [transfer(recipient, 5n)]
    const innerData = executeData(
      inner,
      nonce + 1n,
      deadline,
      await signBatch(visitor, account, inner, nonce + 1n, deadline),
    )
    const outer: Call[] = [
      transfer(recipient, 7n),
      {
        to: reenterer,
        value: 0n,
        data: encodeFunctionData({
          abi: contracts.TestReenterer?.abi as Abi,
          functionName: 'reenter',
          args: [account, innerData],
        }),
      },
    ]
    const before = await balanceOf(recipient)
    const data = executeData(
      outer,
      nonce,
      deadline,
      await signBatch(visitor, account, outer, nonce, deadline),
    )
    expect(await revertOf(account, data)).toBe('CallFailed')
    expect(await sponsorSends(data)).toBe('reverted')
    expect(await balanceOf(recipient)).toBe(before)
    expect(await nonceOf(account)).toBe(nonce)
  })

  test('a call that reverts reverts the whole batch', async () => {
    const nonce = await nonceOf(account)
    const deadline = (await now()) + 600n
    const calls = [approve(spender, 1n), transfer(recipient, 10n ** 30n)]
    const data = executeData(
      calls,
      nonce,
      deadline,
      await signBatch(visitor, account, calls, nonce, deadline),
    )
    expect(await revertOf(account, data)).toBe('CallFailed')
    expect(await sponsorSends(data)).toBe('reverted')
    expect(
      await client.readContract({
        address: token,
        abi: tokenAbi(),
        functionName: 'allowance',
        args: [account, spender],
      }),
    ).toBe(300n)
    expect(await nonceOf(account)).toBe(nonce)
  })

  test('nothing else is accepted: other calldata reverts, plain ETH is received', async () => {
    expect(await revertOf(account, '0xdeadbeef')).not.toBeNull()
    const hash = await sponsorWallet.sendTransaction({
      account: sponsor,
      chain,
      to: account,
      value: 1n,
    })
    expect((await client.waitForTransactionReceipt({ hash })).status).toBe('success')
    expect(await client.getBalance({ address: account })).toBe(1n)
  })

  test('ERC-1271 answers for the account key only', async () => {
    const hash = keccak256(toHex('hello'))
    const ask = async (signature: Hex) =>
      client.readContract({
        address: account,
        abi,
        functionName: 'isValidSignature',
        args: [hash, signature],
      })
    expect(await ask(await visitor.sign({ hash }))).toBe('0x1626ba7e')
    const other = privateKeyToAccount(generatePrivateKey())
    expect(await ask(await other.sign({ hash }))).toBe('0xffffffff')
  })

  test('at its own address no batch ever verifies', async () => {
    const calls = [transfer(recipient, 1n)]
    const deadline = (await now()) + 600n
    const sig = await signBatch(visitor, LATCH_DELEGATE_ADDRESS, calls, 0n, deadline)
    expect(await revertOf(LATCH_DELEGATE_ADDRESS, executeData(calls, 0n, deadline, sig))).toBe(
      'BadSignature',
    )
  })
})
