/**
 * The EIP-1193 provider over a stand-in modal: a ModalMethods object that answers and fails as
 * the modal does (real LatchErrors of the catalogue), reached through the same `call` and
 * `flow` the client hands the provider. Codes, events, the chain switch and EIP-6963.
 */
import {
  ANNOUNCED_ICON,
  ANNOUNCED_NAME,
  ANNOUNCED_RDNS,
  buildUser,
  type Hex,
  type LatchClient,
  LatchError,
  type LatchEthereumProvider,
  type LatchEventHandler,
  type ModalMethods,
  type TransactionRequest,
  type User,
  type WalletAccount,
} from '@latch/shared'
import { describe, expect, test, vi } from 'vitest'
import { announcedWallet } from '../bridge/discovery.ts'
import providerFor from './index.ts'
import { createProvider, type ProviderError, toTransactionRequest } from './provider.ts'

const ADDRESS = '0x8ba1f109551bD432803012645Ac136ddd64DBA72' as Hex
const SIGNATURE = `0x${'ab'.repeat(65)}` as Hex
const HASH = `0x${'cd'.repeat(32)}` as Hex

const wallet: WalletAccount = {
  type: 'wallet',
  address: ADDRESS,
  chainType: 'ethereum',
  chainId: 'eip155:1',
  walletClient: 'latch',
  walletClientType: 'latch',
  connectorType: 'embedded',
  recoveryMethod: 'latch',
  verifiedAt: 1,
} as unknown as WalletAccount
const withWallet = (): User => buildUser('did:latch:u1', '2026-01-01T00:00:00Z', [wallet])
const withoutWallet = (): User => buildUser('did:latch:u2', '2026-01-01T00:00:00Z', [])

/** The modal's side as the provider reaches it, and a client whose 'user' event a test fires. */
function setup(initial: User | null, modal: Partial<ModalMethods> = {}) {
  let user = initial
  const handlers = new Set<LatchEventHandler<'user'>>()
  const calls: { method: string; args: unknown[] }[] = []
  const remote = new Proxy(modal, {
    get(target, name: string) {
      const fn = (target as Record<string, (...a: unknown[]) => Promise<unknown>>)[name]
      return (...args: unknown[]) => {
        // The provider's one look at the app's chains is not a request a test follows.
        if (name !== 'chains') calls.push({ method: name, args })
        if (!fn) return Promise.reject(LatchError.of('method_not_available'))
        return fn(...args)
      }
    },
  }) as ModalMethods
  const setUser = (next: User | null) => {
    user = next
    for (const h of handlers) h(next)
  }
  const client = {
    getUser: async () => user,
    login: vi.fn(async () => {
      if (!modal.login) throw LatchError.of('login_exited')
      return modal.login()
    }),
    on: (event: string, h: LatchEventHandler<'user'>) => {
      if (event === 'user') handlers.add(h)
    },
  } as unknown as LatchClient
  const provider = createProvider(
    client,
    (run) => run(remote),
    (run) => run(remote),
  )
  const events: [string, unknown][] = []
  for (const name of ['connect', 'disconnect', 'accountsChanged', 'chainChanged'] as const) {
    provider.on(name, ((payload: unknown) => events.push([name, payload])) as (p: never) => void)
  }
  return {
    provider,
    calls,
    events,
    setUser,
    client,
    settle: () => new Promise((r) => setTimeout(r)),
  }
}

async function rejection(p: Promise<unknown>): Promise<ProviderError> {
  try {
    await p
  } catch (e) {
    return e as ProviderError
  }
  throw new Error('expected a rejection')
}

describe('accounts and events', () => {
  test('behavior: accounts follow the signed-in user’s in-app wallet; login emits connect and accountsChanged, logout accountsChanged [] and disconnect 4900', async () => {
    const { provider, events, setUser, settle } = setup(null)
    await settle()
    expect(await provider.request({ method: 'eth_accounts' })).toEqual([])
    setUser(withWallet())
    expect(await provider.request({ method: 'eth_accounts' })).toEqual([ADDRESS])
    // The same wallet again (a profile change) is no event.
    setUser(withWallet())
    setUser(null)
    expect(await provider.request({ method: 'eth_accounts' })).toEqual([])
    expect(events.map(([name]) => name)).toEqual([
      'connect',
      'accountsChanged',
      'accountsChanged',
      'disconnect',
    ])
    expect(events[0]?.[1]).toEqual({ chainId: '0x1' })
    expect(events[1]?.[1]).toEqual([ADDRESS])
    expect(events[2]?.[1]).toEqual([])
    expect(events[3]?.[1]).toMatchObject({ code: 4900, message: 'Disconnected' })
  })

  test('behavior: the first request waits for the user the modal knows: eth_accounts right after creation answers the wallet', async () => {
    const { provider } = setup(withWallet())
    expect(await provider.request({ method: 'eth_accounts' })).toEqual([ADDRESS])
  })

  test('behavior: getEthereumProvider() answers once the provider knows the user: a signed-in visitor’s accounts are there, and listeners added then hear no late connect', async () => {
    let answer: (u: User) => void = () => {}
    const slowUser = new Promise<User>((resolve) => {
      answer = resolve
    })
    const client = { getUser: () => slowUser, on: () => {} } as unknown as LatchClient
    const call = ((run: (r: ModalMethods) => Promise<unknown>) => run({} as ModalMethods)) as never
    let got: LatchEthereumProvider | undefined
    const pending = providerFor(client, call, call).then((p) => {
      got = p
      return p
    })
    await new Promise((r) => setTimeout(r))
    // The modal has not answered who is signed in: no provider yet.
    expect(got).toBeUndefined()
    answer(withWallet())
    const provider = await pending
    const heard: string[] = []
    for (const name of ['connect', 'accountsChanged'] as const) {
      provider.on(name, (() => heard.push(name)) as (p: never) => void)
    }
    expect(await provider.request({ method: 'eth_accounts' })).toEqual([ADDRESS])
    expect(heard).toEqual([])
  })

  test('behavior: eth_requestAccounts answers the wallet when signed in; signed out it opens the sign-in, whose close is 4001; a user without an in-app wallet is 4100', async () => {
    const signedIn = setup(withWallet())
    await signedIn.settle()
    expect(await signedIn.provider.request({ method: 'eth_requestAccounts' })).toEqual([ADDRESS])
    expect(signedIn.client.login).not.toHaveBeenCalled()

    const closed = setup(null)
    const error = await rejection(closed.provider.request({ method: 'eth_requestAccounts' }))
    expect(closed.client.login).toHaveBeenCalledTimes(1)
    expect(error).toMatchObject({
      code: 4001,
      message: 'User exited the modal before logging in',
      data: { latchCode: 'login_exited' },
    })

    const loggedIn = setup(null, {
      login: async () => {
        loggedIn.setUser(withWallet())
        return { user: withWallet(), isNewUser: false }
      },
    })
    expect(await loggedIn.provider.request({ method: 'eth_requestAccounts' })).toEqual([ADDRESS])

    const noWallet = setup(withoutWallet())
    await noWallet.settle()
    expect(
      await rejection(noWallet.provider.request({ method: 'eth_requestAccounts' })),
    ).toMatchObject({
      code: 4100,
      message: 'The signed-in user has no in-app wallet',
    })
  })
})

describe('chains', () => {
  test('behavior: eth_chainId starts at 0x1; wallet_switchEthereumChain moves among the supported chains with one chainChanged; reads go to the current chain', async () => {
    const { provider, events, calls } = setup(withWallet(), {
      rpc: async (chainId, method) => (method === 'eth_blockNumber' ? `0x${chainId}` : null),
    })
    expect(await provider.request({ method: 'eth_chainId' })).toBe('0x1')
    expect(await provider.request({ method: 'net_version' })).toBe('1')
    expect(
      await provider.request({
        method: 'wallet_switchEthereumChain',
        params: [{ chainId: '0x89' }],
      }),
    ).toBeNull()
    // The same chain again: no event.
    await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: '0x89' }] })
    expect(events.filter(([n]) => n === 'chainChanged')).toEqual([['chainChanged', '0x89']])
    expect(await provider.request({ method: 'eth_chainId' })).toBe('0x89')
    expect(await provider.request({ method: 'eth_blockNumber' })).toBe('0x137')
    expect(calls.at(-1)).toEqual({ method: 'rpc', args: [137, 'eth_blockNumber', []] })
  })

  test('refusal: an unsupported or malformed chain id is 4901 and the chain stays', async () => {
    const { provider, events } = setup(withWallet())
    for (const chainId of ['0x2a', '0x0', '137', 137, '0x', 'base', null]) {
      const error = await rejection(
        provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId }] }),
      )
      expect(error.code, String(chainId)).toBe(4901)
      expect(error.message).toBe('Unsupported chainId')
    }
    expect(
      await rejection(provider.request({ method: 'wallet_switchEthereumChain' })),
    ).toMatchObject({ code: 4901 })
    expect(await provider.request({ method: 'eth_chainId' })).toBe('0x1')
    expect(events.filter(([n]) => n === 'chainChanged')).toEqual([])
  })

  test("behavior: the app's chains (the modal's `chains`) decide: an app on Base and Base Sepolia starts on Base, switches between them only, and refuses the rest with 4901", async () => {
    const { provider, events, calls } = setup(withWallet(), {
      chains: async () => [8453, 84532],
      sendTransaction: async () => ({ transactionHash: HASH }) as never,
    })
    // Chain 1 is not the app's: the provider starts on its first chain.
    expect(await provider.request({ method: 'eth_chainId' })).toBe('0x2105')
    expect(events).toContainEqual(['connect', { chainId: '0x2105' }])
    for (const chainId of ['0x1', '0x89', '0xaa36a7']) {
      const error = await rejection(
        provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId }] }),
      )
      expect(error, chainId).toMatchObject({ code: 4901, message: 'Unsupported chainId' })
    }
    await provider.request({
      method: 'wallet_switchEthereumChain',
      params: [{ chainId: '0x14a34' }],
    })
    expect(events.filter(([n]) => n === 'chainChanged')).toEqual([['chainChanged', '0x14a34']])
    // A transaction naming a chain the app does not have never reaches the modal.
    const before = calls.length
    const error = await rejection(
      provider.request({
        method: 'eth_sendTransaction',
        params: [{ from: ADDRESS, to: ADDRESS, chainId: '0x1' }],
      }),
    )
    expect(error).toMatchObject({ code: 4901, message: 'Unsupported chainId' })
    expect(calls.slice(before).map((c) => c.method)).toEqual([])
  })
})

describe('signing and sending go through the modal’s screens', () => {
  test('behavior: personal_sign, eth_sign and eth_signTypedData_v4 reach the sign screen with the message or typed data and answer its signature', async () => {
    const typed = { domain: { name: 'Shop' }, types: {}, primaryType: 'Order', message: {} }
    const { provider, calls, settle } = setup(withWallet(), {
      signMessage: async () => SIGNATURE,
      signTypedData: async () => SIGNATURE,
    })
    await settle()
    expect(
      await provider.request({ method: 'personal_sign', params: ['0x68656c6c6f', ADDRESS] }),
    ).toBe(SIGNATURE)
    expect(
      await provider.request({ method: 'eth_sign', params: [ADDRESS.toLowerCase(), 'hello'] }),
    ).toBe(SIGNATURE)
    expect(
      await provider.request({ method: 'eth_signTypedData_v4', params: [ADDRESS, typed] }),
    ).toBe(SIGNATURE)
    expect(calls.map((c) => [c.method, c.args[0]])).toEqual([
      ['signMessage', '0x68656c6c6f'],
      ['signMessage', 'hello'],
      ['signTypedData', typed],
    ])
  })

  test('refusal: another address or no wallet is 4100 and reaches no screen; closing the sign screen is 4001', async () => {
    const { provider, calls, settle } = setup(withWallet(), {
      signMessage: async () => {
        throw LatchError.of('signature_rejected')
      },
    })
    await settle()
    const other = `0x${'11'.repeat(20)}`
    expect(
      await rejection(provider.request({ method: 'personal_sign', params: ['hi', other] })),
    ).toMatchObject({ code: 4100 })
    expect(
      await rejection(provider.request({ method: 'eth_signTypedData_v4', params: [other, {}] })),
    ).toMatchObject({ code: 4100 })
    expect(calls).toEqual([])
    expect(
      await rejection(provider.request({ method: 'personal_sign', params: ['hi', ADDRESS] })),
    ).toMatchObject({
      code: 4001,
      message: 'Signature rejected',
      data: { latchCode: 'signature_rejected' },
    })
    // A request refused because another is on screen keeps -32002 and its hint for the dapp.
    const busy = setup(withWallet(), {
      signMessage: async () => {
        throw LatchError.of('rpc_request_pending')
      },
    })
    await busy.settle()
    expect(
      await rejection(busy.provider.request({ method: 'personal_sign', params: ['hi', ADDRESS] })),
    ).toMatchObject({
      code: -32002,
      message: 'Request already pending',
      data: {
        latchCode: 'rpc_request_pending',
        details: 'Don’t see your wallet modal? Check your other browser windows.',
      },
    })
    const signedOut = setup(null, { signMessage: async () => SIGNATURE })
    await signedOut.settle()
    expect(
      await rejection(
        signedOut.provider.request({ method: 'personal_sign', params: ['hi', ADDRESS] }),
      ),
    ).toMatchObject({ code: 4100 })
    expect(signedOut.calls).toEqual([])
  })

  test('behavior: eth_sendTransaction reaches the review screen as a TransactionRequest (gas as gasLimit, hex nonce and type as numbers, the current chain) and answers the hash; closing is 4001', async () => {
    let sent: TransactionRequest | undefined
    const { provider, settle } = setup(withWallet(), {
      sendTransaction: async (request) => {
        sent = request
        if (request.value === '0xdead') throw LatchError.of('transaction_exited')
        return { transactionHash: HASH } as never
      },
    })
    await settle()
    const tx = {
      from: ADDRESS,
      to: ADDRESS,
      value: '0x2386f26fc10000',
      gas: '0x5208',
      nonce: '0x3',
      type: '0x2',
      data: '0x',
    }
    expect(await provider.request({ method: 'eth_sendTransaction', params: [tx] })).toBe(HASH)
    expect(sent).toEqual({
      chainId: 1,
      from: ADDRESS,
      to: ADDRESS,
      value: '0x2386f26fc10000',
      gasLimit: '0x5208',
      nonce: 3,
      type: 2,
      data: '0x',
    })
    expect(
      await rejection(
        provider.request({ method: 'eth_sendTransaction', params: [{ ...tx, value: '0xdead' }] }),
      ),
    ).toMatchObject({
      code: 4001,
      message: 'User exited the modal before submitting the transaction',
    })
    expect(
      await rejection(
        provider.request({
          method: 'eth_sendTransaction',
          params: [{ ...tx, from: `0x${'22'.repeat(20)}` }],
        }),
      ),
    ).toMatchObject({ code: 4100 })
    expect(
      await rejection(provider.request({ method: 'eth_sendTransaction', params: ['0x00'] })),
    ).toMatchObject({ code: -32602 })
    expect(
      await rejection(
        provider.request({ method: 'eth_sendTransaction', params: [{ ...tx, chainId: '0x2a' }] }),
      ),
    ).toMatchObject({ code: 4901 })
  })

  test('behavior: toTransactionRequest keeps numbers as given and refuses a nonce that is not a quantity', () => {
    expect(toTransactionRequest({ to: ADDRESS, nonce: 7, chainId: 137 }, 1)).toEqual({
      to: ADDRESS,
      nonce: 7,
      chainId: 137,
    })
    expect(() => toTransactionRequest({ nonce: 'seven' }, 1)).toThrow(
      'nonce must be a hex quantity',
    )
  })

  test('behavior: JSON-RPC’s input and gas are the modal’s data and gasLimit; an empty access list is no access list', () => {
    expect(
      toTransactionRequest(
        { to: ADDRESS, input: '0xa9059cbb', gas: '0x5208', accessList: [], value: '0x1' },
        1,
      ),
    ).toEqual({ to: ADDRESS, data: '0xa9059cbb', gasLimit: '0x5208', value: '0x1', chainId: 1 })
    expect(toTransactionRequest({ to: ADDRESS, input: '0x01', data: '0x01' }, 1).data).toBe('0x01')
  })

  test('refusal: a field that would change the transaction if dropped is refused with -32602 naming it, never dropped', () => {
    const refused = (tx: Record<string, unknown>) => {
      try {
        toTransactionRequest({ to: ADDRESS, ...tx }, 1)
      } catch (e) {
        return e as ProviderError
      }
      throw new Error(`accepted ${JSON.stringify(tx)}`)
    }
    const cases: [Record<string, unknown>, string][] = [
      [{ authorizationList: [{ address: ADDRESS }] }, 'authorizationList is not supported'],
      [{ accessList: [{ address: ADDRESS, storageKeys: [] }] }, 'accessList is not supported'],
      [{ maxFeePerBlobGas: '0x1' }, 'maxFeePerBlobGas is not supported'],
      [{ blobVersionedHashes: ['0x01'] }, 'blobVersionedHashes is not supported'],
      [{ input: '0x01', data: '0x02' }, 'input and data differ'],
      [{ gas: '0x1', gasLimit: '0x2' }, 'gas and gasLimit differ'],
    ]
    for (const [tx, message] of cases) {
      const error = refused(tx)
      expect(error.code, message).toBe(-32602)
      expect(error.message).toBe(`eth_sendTransaction: ${message}`)
    }
  })
})

describe('EIP-5792', () => {
  const ID = `0x${'ef'.repeat(32)}`
  const batch = {
    version: '2.0.0',
    chainId: '0x1',
    from: ADDRESS,
    atomicRequired: true,
    calls: [{ to: ADDRESS, value: '0x1' }],
  }

  test('behavior: wallet_sendCalls, wallet_getCapabilities, wallet_getCallsStatus and wallet_showCallsStatus reach the modal by name with their params and answer what it answers', async () => {
    const capabilities = {
      '0x1': { atomic: { status: 'supported' }, paymasterService: { supported: true } },
    }
    const status = { version: '2.0.0', id: ID, chainId: '0x1', status: 200, atomic: true }
    const answers: Record<string, unknown> = {
      wallet_sendCalls: { id: ID },
      wallet_getCapabilities: capabilities,
      wallet_getCallsStatus: status,
      wallet_showCallsStatus: null,
    }
    const { provider, calls } = setup(withWallet(), {
      rpc: async (_chainId, method) => answers[method],
    })
    await expect(
      provider.request({ method: 'wallet_sendCalls', params: [batch] }),
    ).resolves.toEqual({
      id: ID,
    })
    await expect(
      provider.request({ method: 'wallet_getCapabilities', params: [ADDRESS, ['0x1']] }),
    ).resolves.toEqual(capabilities)
    await expect(
      provider.request({ method: 'wallet_getCallsStatus', params: [ID] }),
    ).resolves.toEqual(status)
    await expect(
      provider.request({ method: 'wallet_showCallsStatus', params: [ID] }),
    ).resolves.toBeNull()
    expect(calls).toEqual([
      { method: 'rpc', args: [1, 'wallet_sendCalls', [batch]] },
      { method: 'rpc', args: [1, 'wallet_getCapabilities', [ADDRESS, ['0x1']]] },
      { method: 'rpc', args: [1, 'wallet_getCallsStatus', [ID]] },
      { method: 'rpc', args: [1, 'wallet_showCallsStatus', [ID]] },
    ])
  })

  test("refusal: the modal's refusals keep their meaning: a closed review 4001, another account 4100, a bad batch -32602, a sponsor's refusal its Latch code", async () => {
    const answers: LatchError[] = [
      LatchError.of('transaction_exited'),
      LatchError.of('rpc_unauthorized'),
      LatchError.of('invalid_request_arguments', { message: 'wallet_sendCalls: 1 to 16 calls' }),
      new LatchError({
        code: 'sponsor_policy_refused',
        type: 'api_error',
        message: 'Call 1 calls function 0x40c10f19 of 0x…, which the app does not pay for',
        retryable: false,
      }),
    ]
    const { provider } = setup(withWallet(), {
      rpc: async () => {
        throw answers.shift()
      },
    })
    const send = () => rejection(provider.request({ method: 'wallet_sendCalls', params: [batch] }))
    expect(await send()).toMatchObject({ code: 4001 })
    expect(await send()).toMatchObject({ code: 4100 })
    expect(await send()).toMatchObject({ code: -32602, message: 'wallet_sendCalls: 1 to 16 calls' })
    expect(await send()).toMatchObject({
      code: -32603,
      message: 'Call 1 calls function 0x40c10f19 of 0x…, which the app does not pay for',
      data: { latchCode: 'sponsor_policy_refused' },
    })
  })
})

describe('EIP-5792 error codes', () => {
  test('refusal: the refusals EIP-5792 names answer with its codes: 5700 a required capability, 5710 a chain without batches, 5720 an id used already, 5730 an unknown batch id, 5740 too many calls, 5760 atomicity the chain cannot give; the Latch code rides along', async () => {
    const cases = [
      ['calls_capability_unsupported', 5700],
      ['calls_chain_unsupported', 5710],
      ['calls_duplicate_id', 5720],
      ['calls_unknown_id', 5730],
      ['calls_too_many', 5740],
      ['calls_atomic_unsupported', 5760],
    ] as const
    const answers = cases.map(([code]) => LatchError.of(code, { message: `refused: ${code}` }))
    const { provider } = setup(withWallet(), {
      rpc: async () => {
        throw answers.shift()
      },
    })
    for (const [code, rpcCode] of cases) {
      const method = code === 'calls_unknown_id' ? 'wallet_getCallsStatus' : 'wallet_sendCalls'
      const params = method === 'wallet_sendCalls' ? [{ chainId: '0x1', calls: [] }] : ['0x00']
      expect(await rejection(provider.request({ method, params }))).toMatchObject({
        code: rpcCode,
        message: `refused: ${code}`,
        data: { latchCode: code },
      })
    }
  })
})

describe('refusals and errors', () => {
  test('refusal: unsupported methods are 4200 without reaching the modal, eth_sendRawTransaction and wallet_addEthereumChain included; a request without a method is -32600', async () => {
    const { provider, calls } = setup(withWallet(), { rpc: async () => '0x0' })
    for (const method of [
      'eth_sendRawTransaction',
      'wallet_addEthereumChain',
      'eth_getLogs',
      'debug_traceTransaction',
      'eth_coinbase',
    ]) {
      const error = await rejection(provider.request({ method }))
      expect(error.code, method).toBe(4200)
      expect(error.message).toBe(`The in-app wallet does not support ${method}`)
    }
    expect(calls).toEqual([])
    expect(await rejection(provider.request({} as never))).toMatchObject({ code: -32600 })
  })

  test('behavior: the modal’s refusals of a read keep their meaning: unsupported chain 4901, signed out 4100, a node error its JSON-RPC code', async () => {
    const answers: LatchError[] = [
      LatchError.of('unsupported_chain'),
      LatchError.of('rpc_unauthorized'),
      LatchError.of('rpc_invalid_input', { message: 'execution reverted' }),
    ]
    const { provider } = setup(withWallet(), {
      rpc: async () => {
        throw answers.shift()
      },
    })
    expect(await rejection(provider.request({ method: 'eth_call', params: [{}] }))).toMatchObject({
      code: 4901,
      message: 'Unsupported chainId',
    })
    expect(await rejection(provider.request({ method: 'eth_call', params: [{}] }))).toMatchObject({
      code: 4100,
    })
    expect(await rejection(provider.request({ method: 'eth_call', params: [{}] }))).toMatchObject({
      code: -32000,
      message: 'execution reverted',
    })
  })

  test('behavior: a listener that throws does not keep the others from the event; removeListener stops one', async () => {
    const { provider, setUser } = setup(null)
    const heard: unknown[] = []
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    const loud = () => {
      throw new Error('page bug')
    }
    const quiet = (a: unknown) => heard.push(a)
    provider.on('accountsChanged', loud as (p: never) => void)
    provider.on('accountsChanged', quiet as (p: never) => void)
    setUser(withWallet())
    provider.removeListener('accountsChanged', quiet as (p: never) => void)
    setUser(null)
    expect(heard).toEqual([[ADDRESS]])
    expect(error).toHaveBeenCalled()
    error.mockRestore()
  })
})

describe('EIP-6963', () => {
  test('behavior: announce is opt-in; announced, the provider answers eip6963:requestProvider with name Latch, its rdns and a data:image icon, once per client', async () => {
    const details: { info: Record<string, string>; provider: unknown }[] = []
    const listen = (e: Event) => details.push((e as CustomEvent).detail)
    window.addEventListener('eip6963:announceProvider', listen)
    const { client } = setup(withWallet())
    const call = ((run: (r: ModalMethods) => Promise<unknown>) => run({} as ModalMethods)) as never
    const quiet = await providerFor(client, call, call)
    expect(details).toEqual([])
    // The client's one provider: the same object, now announced.
    const announced = await providerFor(client, call, call, { announce: true })
    expect(announced).toBe(quiet)
    window.dispatchEvent(new Event('eip6963:requestProvider'))
    await providerFor(client, call, call, { announce: true })
    expect(details).toHaveLength(2)
    for (const d of details) {
      expect(d.provider).toBe(quiet)
      expect(d.info).toMatchObject({
        name: ANNOUNCED_NAME,
        rdns: ANNOUNCED_RDNS,
        icon: ANNOUNCED_ICON,
      })
      expect(d.info.uuid).toMatch(/^[0-9a-f-]{36}$/)
      expect(Object.isFrozen(d.info)).toBe(true)
    }
    expect(ANNOUNCED_ICON.startsWith('data:image/svg+xml,')).toBe(true)
    window.removeEventListener('eip6963:announceProvider', listen)
  })
})

test('behavior: the wallet bridge does not list the in-app wallet’s own announcement as a browser wallet (it would sign in through itself)', () => {
  const { provider } = setup(withWallet())
  const info = {
    uuid: '350670db-19fa-4704-a166-e52e178b59d2',
    name: ANNOUNCED_NAME,
    icon: ANNOUNCED_ICON,
    rdns: ANNOUNCED_RDNS,
  }
  expect(announcedWallet({ info, provider })).toBeUndefined()
  // The same announcement from another provider is a wallet.
  const other = { request: async () => null, on() {}, removeListener() {} }
  expect(announcedWallet({ info, provider: other })?.info.name).toBe(ANNOUNCED_NAME)
})
