/**
 * `latch delegate address` and `latch delegate deploy`: Latch's EIP-7702 delegate at its
 * deterministic address on an app's chain. Deploying needs a funded key, given as a file or an
 * environment variable (never as an argument, which shell history and `ps` keep).
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { getChain, LATCH_DELEGATE_ADDRESS } from '@latch/shared'
import { type Hex, isHex } from 'viem'
import type { CliIo } from '../cli-io.ts'
import { DeployError, deployDelegate } from './deploy.ts'

export const DELEGATE_USAGE = `Usage: npm run latch -- delegate <command>

  delegate address               Print the delegate's address (the same on every chain)
  delegate deploy --chain <id> (--key-file <path> | --key-env <VAR>) [--rpc-url <url>] [--json]
                                 Deploy the delegate to a chain through the deterministic-
                                 deployment proxy (CREATE2, salt zero), the key's account paying;
                                 nothing is sent when it is already there. The node: --rpc-url,
                                 else LATCH_RPC_URL_<chainId>, else the chain's public node
`

function keyFrom(values: { 'key-file'?: string; 'key-env'?: string }, io: CliIo): Hex | string {
  const file = values['key-file']
  const envName = values['key-env']
  if ((file === undefined) === (envName === undefined)) {
    return 'delegate deploy needs exactly one of --key-file and --key-env'
  }
  let raw: string | undefined
  if (file !== undefined) {
    try {
      raw = readFileSync(file, 'utf8')
    } catch {
      return `Cannot read the key file '${file}'`
    }
  } else if (envName !== undefined) {
    raw = io.env[envName] ?? process.env[envName]
    if (raw === undefined) return `The environment variable ${envName} is not set`
  }
  const key = (raw ?? '').trim()
  const hex = key.startsWith('0x') ? key : `0x${key}`
  if (!isHex(hex) || hex.length !== 66) return 'The key is not 32 bytes of hex'
  return hex
}

export async function delegateCommand(argv: string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (e) {
    io.err(`${(e as Error).message}\n\n${DELEGATE_USAGE}`)
    return 2
  }
  const { values, positionals } = parsed
  const [sub] = positionals
  if (values.help || sub === 'help') {
    io.out(DELEGATE_USAGE)
    return 0
  }
  if (sub === 'address' && positionals.length === 1) {
    io.out(LATCH_DELEGATE_ADDRESS)
    return 0
  }
  if (sub !== 'deploy' || positionals.length !== 1) {
    io.err(DELEGATE_USAGE)
    return 2
  }
  const chainId = Number(values.chain)
  if (!values.chain || !Number.isSafeInteger(chainId) || chainId <= 0) {
    io.err(`delegate deploy needs --chain <id>\n\n${DELEGATE_USAGE}`)
    return 2
  }
  const key = keyFrom(values, io)
  if (!key.startsWith('0x')) {
    io.err(`${key}\n\n${DELEGATE_USAGE}`)
    return 2
  }
  const rpcUrl =
    values['rpc-url'] ??
    io.env[`LATCH_RPC_URL_${chainId}`] ??
    process.env[`LATCH_RPC_URL_${chainId}`] ??
    getChain(chainId)?.rpcUrl
  if (!rpcUrl) {
    io.err(`Chain ${chainId} is not one Latch knows: give its node with --rpc-url`)
    return 2
  }
  try {
    const result = await deployDelegate({ rpcUrl, chainId, privateKey: key as Hex })
    if (values.json) io.out(JSON.stringify({ chainId, ...result }, null, 2))
    else if (result.transactionHash === null) {
      io.out(`The delegate is already deployed on chain ${chainId} at ${result.address}`)
    } else {
      io.out(
        `Deployed the delegate on chain ${chainId} at ${result.address} (transaction ${result.transactionHash})`,
      )
    }
    return 0
  } catch (e) {
    io.err(
      `Error: ${e instanceof DeployError ? e.message : `the node answered: ${(e as Error).message.split('\n')[0]}`}`,
    )
    return 1
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      chain: { type: 'string' },
      'key-file': { type: 'string' },
      'key-env': { type: 'string' },
      'rpc-url': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })
}
