/**
 * The demo's local chain, for `npm start` only: anvil (the dev dependency the tests run, started
 * by the same helper) as the demo app's chain, and a funder that gives every in-app wallet of
 * the demo app 1 ETH there, so the demo page's "Send" works with nothing configured.
 *
 * The funder learns of wallets the way an app's backend would: webhooks of the demo app
 * (`wallet.created`, and `user.authenticated` for a wallet made before this start, whose chain
 * was another anvil) to a receiver on 127.0.0.1, each delivery checked with `verifyWebhook`
 * under the endpoint's secret, so nobody but this Latch server can make it fund an address. It
 * pays from anvil's first default account, only a wallet whose balance is 0; nothing of it
 * exists outside the demo.
 *
 * The chain also shows batches the app pays for (`startDemoSponsor`): Latch's delegate at its
 * deterministic address, a demo ERC-20 (anyone may mint; the funder gives each wallet 100), and
 * the demo app's sponsor, funded from anvil's third account, whose policy pays for the token's
 * `approve` and `transfer` and nothing else. The page's batch button then approves and
 * transfers in one batch whose gas the app pays, from a wallet that may hold no ETH at all.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { DEFAULT_CHAIN_ID, embeddedWallet, type User } from '@latch/shared'
import {
  createWalletClient,
  encodeFunctionData,
  getAddress,
  type Hex,
  toFunctionSelector,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { TEST_CONTRACTS } from '../server/src/sponsor/contracts/test/artifact.ts'
import { chainClients, deployDelegate } from '../server/src/sponsor/deploy.ts'
import { createSponsor, findSponsor, updatePolicy } from '../server/src/sponsor/store.ts'
import {
  ANVIL_ACCOUNTS,
  anvilBinary,
  type RunningAnvil,
  startAnvil,
} from '../server/src/testing/anvil.ts'
import { addEndpoint, listEndpoints, removeEndpoint } from '../server/src/webhooks/endpoints.ts'
import { verifyWebhook, WebhookVerificationError } from '../server-sdk/src/webhooks.ts'

/** What each new in-app wallet of the demo app gets: 1 ETH. */
export const DEMO_FUNDING_WEI = 10n ** 18n
/** The demo app's chain: the wallet's default chain, served by the local anvil. */
export const DEMO_CHAIN_ID = DEFAULT_CHAIN_ID
/** What each new in-app wallet of the demo app gets of the demo token: 100 (no decimals). */
export const DEMO_TOKEN_FUNDING = 100n
/** What the demo's sponsor is given at each start, and the least it keeps before a top-up. */
const SPONSOR_FUNDING_WEI = 10n * 10n ** 18n
/** The webhook path the funder listens on; an endpoint of the demo app with it is the funder's. */
const HOOK_PATH = '/demo-funding'
/** A webhook body is small; anything larger is not Latch's. */
const MAX_BODY_BYTES = 64 * 1024

type Say = (line: string) => void

/**
 * Anvil as chain 1 on a free port, or null when LATCH_DEMO_CHAIN is 'off', or the binary is not
 * installed or does not start (the demo then runs without a chain and says so).
 */
export async function startDemoChain(
  say: Say,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunningAnvil | null> {
  if (env.LATCH_DEMO_CHAIN?.trim() === 'off') {
    say('LATCH_DEMO_CHAIN=off: no local chain, send needs a chain')
    return null
  }
  if (!anvilBinary()) {
    say('no anvil binary (npm install installs @foundry-rs/anvil): send needs a chain')
    return null
  }
  try {
    return await startAnvil({ chainId: DEMO_CHAIN_ID })
  } catch (error) {
    say(`anvil did not start (${String(error)}): send needs a chain`)
    return null
  }
}

type EndpointDeps = Parameters<typeof addEndpoint>[0]
type SponsorDeps = Parameters<typeof createSponsor>[0]

export interface DemoSponsor {
  /** The demo token the sponsor pays for. */
  token: Hex
  /** The sponsor's account. */
  address: Hex
}

/** The one account that deploys and funds the demo's contracts (the funder pays from the first). */
const SETUP_ACCOUNT = ANVIL_ACCOUNTS[2]

const MINT_ABI = [
  {
    type: 'function',
    name: 'mint',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'balanceOf',
    stateMutability: 'view',
    inputs: [{ name: 'who', type: 'address' }],
    outputs: [{ name: '', type: 'uint256' }],
  },
] as const

/**
 * Latch's delegate and the demo token on the demo's chain, and the demo app's sponsor there
 * (kept from an earlier start, or made), funded and paying for the token's approve and transfer.
 * Null, said, when any of it fails: the rest of the demo runs without batches.
 */
export async function startDemoSponsor(options: {
  deps: SponsorDeps
  appId: string
  anvil: RunningAnvil
  say: Say
}): Promise<DemoSponsor | null> {
  const { deps, appId, anvil, say } = options
  try {
    const { chain, transport, client } = await chainClients(anvil.url, anvil.chainId)
    const block = (await client.request({
      method: 'eth_getBlockByNumber',
      params: ['latest', false],
    })) as { requestsHash?: string } | null
    if (typeof block?.requestsHash !== 'string') {
      say('the local chain does not run EIP-7702 (Prague rules): no batches paid by the app')
      return null
    }
    await deployDelegate({
      rpcUrl: anvil.url,
      chainId: anvil.chainId,
      privateKey: SETUP_ACCOUNT.privateKey,
    })
    const wallet = createWalletClient({
      account: privateKeyToAccount(SETUP_ACCOUNT.privateKey),
      chain,
      transport,
    })
    const source = TEST_CONTRACTS.TestToken
    if (!source) throw new Error('no TestToken contract to deploy as the demo token')
    const deployed = await client.waitForTransactionReceipt({
      hash: await wallet.deployContract({ abi: source.abi, bytecode: source.bytecode }),
      timeout: 30_000,
    })
    const token = deployed.contractAddress && getAddress(deployed.contractAddress)
    if (!token) throw new Error('the demo token deployment made no contract')
    const sponsor =
      (await findSponsor(deps, appId, anvil.chainId)) ??
      (await createSponsor(deps, appId, anvil.chainId))
    await updatePolicy(deps, appId, anvil.chainId, {
      contracts: {
        [token]: [
          toFunctionSelector('function approve(address,uint256)'),
          toFunctionSelector('function transfer(address,uint256)'),
        ],
      },
    })
    if ((await client.getBalance({ address: sponsor.address })) < SPONSOR_FUNDING_WEI / 10n) {
      await client.waitForTransactionReceipt({
        hash: await wallet.sendTransaction({ to: sponsor.address, value: SPONSOR_FUNDING_WEI }),
        timeout: 30_000,
      })
    }
    return { token, address: sponsor.address }
  } catch (error) {
    say(`no batches paid by the app on the local chain: ${String(error)}`)
    return null
  }
}

/** Gives `address` the demo token's funding when it holds none of it. */
async function fundToken(anvil: RunningAnvil, token: Hex, address: Hex): Promise<boolean> {
  const held = await anvil.rpc<string>('eth_call', [
    {
      to: token,
      data: encodeFunctionData({ abi: MINT_ABI, functionName: 'balanceOf', args: [address] }),
    },
    'latest',
  ])
  if (BigInt(held) > 0n) return false
  const hash = await anvil.rpc<string>('eth_sendTransaction', [
    {
      from: ANVIL_ACCOUNTS[0].address,
      to: token,
      data: encodeFunctionData({
        abi: MINT_ABI,
        functionName: 'mint',
        args: [address, DEMO_TOKEN_FUNDING],
      }),
    },
  ])
  await anvil.receipt(hash)
  return true
}

export interface Funder {
  url: string
  close(): Promise<void>
}

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        resolve(null)
        req.destroy()
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

/** The in-app wallet's address in a `wallet.created` or `user.authenticated` payload. */
function walletAddress(data: Record<string, unknown>): `0x${string}` | null {
  const user = data.user as Partial<User> | undefined
  const wallet =
    (data.wallet as { address?: unknown } | undefined) ??
    (Array.isArray(user?.linkedAccounts) ? embeddedWallet(user.linkedAccounts) : undefined)
  const address = wallet?.address
  return typeof address === 'string' && /^0x[0-9a-fA-F]{40}$/.test(address)
    ? (address as `0x${string}`)
    : null
}

/**
 * Starts the funder and makes it the demo app's only funding endpoint (an earlier start's is
 * removed: its port and secret are gone). Deliveries are handled one at a time and a wallet
 * with a balance gets nothing, so a retried or repeated event pays nothing more.
 */
export async function startFunder(options: {
  deps: EndpointDeps
  appId: string
  anvil: RunningAnvil
  say: Say
  /** The demo token each wallet also gets 100 of, when the demo has one. */
  token?: Hex | null
}): Promise<Funder> {
  const { deps, appId, anvil, say, token } = options
  let secret = ''
  let queue: Promise<unknown> = Promise.resolve()

  const answer = (res: ServerResponse, status: number) => {
    res.writeHead(status, { 'content-length': 0 }).end()
  }
  const fund = async (address: `0x${string}`) => {
    if (token && (await fundToken(anvil, token, address))) {
      say(`gave the in-app wallet ${address} ${DEMO_TOKEN_FUNDING} demo tokens`)
    }
    if (BigInt(await anvil.rpc<string>('eth_getBalance', [address, 'latest'])) > 0n) return
    const hash = await anvil.rpc<string>('eth_sendTransaction', [
      {
        from: ANVIL_ACCOUNTS[0].address,
        to: address,
        value: `0x${DEMO_FUNDING_WEI.toString(16)}`,
      },
    ])
    await anvil.receipt(hash)
    say(`funded the in-app wallet ${address} with 1 ETH on the local chain`)
  }
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST' || req.url !== HOOK_PATH) return answer(res, 404)
    const body = await readBody(req)
    if (body === null) return answer(res, 413)
    let event: ReturnType<typeof verifyWebhook>
    try {
      event = verifyWebhook(req.headers, body, secret)
    } catch (error) {
      if (error instanceof WebhookVerificationError) return answer(res, 401)
      throw error
    }
    const address = walletAddress(event.data)
    if (address) {
      const funded = queue.then(() => fund(address))
      queue = funded.catch(() => {})
      await funded
    }
    answer(res, 204)
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      say(`funding failed: ${String(error)}`)
      // A 5xx: Latch retries the delivery.
      if (!res.headersSent) answer(res, 500)
      else res.destroy()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${HOOK_PATH}`
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
  try {
    for (const endpoint of await listEndpoints(deps, appId)) {
      if (new URL(endpoint.url).pathname === HOOK_PATH)
        await removeEndpoint(deps, appId, endpoint.id)
    }
    const endpoint = await addEndpoint(deps, appId, {
      url,
      events: 'wallet.created,user.authenticated',
    })
    secret = endpoint.secret
  } catch (error) {
    await close()
    throw error
  }
  return { url, close }
}
