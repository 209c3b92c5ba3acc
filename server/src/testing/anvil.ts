/**
 * A throwaway local chain for tests: anvil (from @foundry-rs/anvil) on a free 127.0.0.1 port
 * with the chain id a test asks for, ready once it answers eth_chainId. Its default accounts
 * (the well-known "test test … junk" mnemonic) come funded with 10 000 ether each.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const START_TIMEOUT_MS = 30_000
const STOP_TIMEOUT_MS = 5_000

/** The first anvil default accounts (mnemonic "test test test … junk", m/44'/60'/0'/0/i). */
export const ANVIL_ACCOUNTS = [
  {
    address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
    privateKey: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  },
  {
    address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    privateKey: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  },
  {
    address: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
    privateKey: '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  },
] as const satisfies ReadonlyArray<{ address: `0x${string}`; privateKey: `0x${string}` }>

/** Balance of each default account at start, in wei (10 000 ether). */
export const ANVIL_BALANCE_WEI = 10_000n * 10n ** 18n

export interface RunningAnvil {
  /** http://127.0.0.1:<port> */
  url: string
  chainId: number
  /** One JSON-RPC call; throws the node's error message on an error answer. */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>
  /**
   * The receipt of a sent transaction, once readable: automine answers the hash before its block
   * always is (under load the receipt is null for a moment). Throws after `timeoutMs`.
   */
  receipt(hash: string, timeoutMs?: number): Promise<AnvilReceipt>
  stop(): Promise<void>
}

/** The receipt fields tests read (hex quantities, as the node answers them). */
export interface AnvilReceipt {
  status: string
  blockNumber: string
  contractAddress: string | null
  [field: string]: unknown
}

/** How long receipt() waits for a transaction to be readable, by default. */
export const ANVIL_RECEIPT_TIMEOUT_MS = 10_000

export interface AnvilOptions {
  chainId?: number
  /** Gas price/base fee in wei; anvil's default otherwise. */
  baseFee?: bigint
  /** Legacy chain (no EIP-1559 base fee), as some networks behave. */
  legacy?: boolean
  /** The rules to run, e.g. 'prague' (EIP-7702) or 'cancun' (none); anvil's latest otherwise. */
  hardfork?: string
}

/** The anvil binary installed by @foundry-rs/anvil for this platform. */
export function anvilBinary(): string | null {
  const require = createRequire(import.meta.url)
  const target = `@foundry-rs/anvil-${process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`
  try {
    const pkg = require.resolve(`${target}/package.json`)
    const bin = join(dirname(pkg), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil')
    return existsSync(bin) ? bin : null
  } catch {
    return null
  }
}

async function call<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  })
  const body = (await res.json()) as { result?: T; error?: { message?: string } }
  if (body.error) throw new Error(`anvil ${method}: ${body.error.message ?? 'error'}`)
  return body.result as T
}

/** Starts anvil; stop() it when the test ends (afterAll). */
export async function startAnvil(options: AnvilOptions = {}): Promise<RunningAnvil> {
  const bin = anvilBinary()
  if (!bin) throw new Error('anvil binary not found (npm install @foundry-rs/anvil)')
  const chainId = options.chainId ?? 1
  // Port 0: anvil binds a port the system picks and prints it. A port picked here and handed
  // over could be taken meanwhile by another worker's server, or by another worker's anvil on
  // the same chain, which would then answer this one's calls.
  const args = ['--host', '127.0.0.1', '--port', '0', '--chain-id', String(chainId)]
  if (options.baseFee !== undefined) args.push('--base-fee', options.baseFee.toString())
  if (options.legacy) args.push('--hardfork', 'berlin')
  else if (options.hardfork) args.push('--hardfork', options.hardfork)
  const child: ChildProcess = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000)
  })
  // Its banner ends with the address it listens on; the request log that follows is dropped.
  let banner = ''
  let url = ''
  child.stdout?.on('data', (d: Buffer) => {
    if (url) return
    banner = (banner + d.toString()).slice(-4000)
    const listening = /Listening on (127\.0\.0\.1:\d+)/.exec(banner)
    if (listening) url = `http://${listening[1]}`
  })

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS)
    await exited
    clearTimeout(timer)
  }

  const deadline = Date.now() + START_TIMEOUT_MS
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`anvil exited while starting (${child.exitCode}): ${stderr}`)
    }
    try {
      if (!url) throw new Error('not listening yet')
      const id = await call<string>(url, 'eth_chainId', [])
      if (Number(id) !== chainId) {
        await stop()
        throw new Error(`anvil answered chain ${id}, expected ${chainId}`)
      }
      break
    } catch (e) {
      if (e instanceof Error && e.message.startsWith('anvil answered')) throw e
      if (Date.now() > deadline) {
        await stop()
        throw new Error(`anvil did not answer within ${START_TIMEOUT_MS} ms: ${stderr}`)
      }
      await new Promise((r) => setTimeout(r, url ? 100 : 20))
    }
  }

  return {
    url,
    chainId,
    rpc: <T>(method: string, params: unknown[] = []) => call<T>(url, method, params),
    async receipt(hash, timeoutMs = ANVIL_RECEIPT_TIMEOUT_MS) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const receipt = await call<AnvilReceipt | null>(url, 'eth_getTransactionReceipt', [hash])
        if (receipt) return receipt
        if (Date.now() > deadline) throw new Error(`no receipt for ${hash} within ${timeoutMs} ms`)
        await new Promise((r) => setTimeout(r, 50))
      }
    },
    stop,
  }
}
