/**
 * `latch delegate address` and `latch delegate deploy`: Latch's EIP-7702 delegate at its
 * deterministic address on an app's chain. Deploying needs a funded key, given as a file or an
 * environment variable (never as an argument, which shell history and `ps` keep).
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { getChain, LATCH_DELEGATE_ADDRESS } from '@latch/shared'
import { type Hex, isHex } from 'viem'
import { findApp } from '../apps/service.ts'
import { rpcUrlFor } from '../chains/rpc-urls.ts'
import type { CliIo } from '../cli-io.ts'
import { openServices } from '../index.ts'
import { DeployError, deployDelegate } from './deploy.ts'
import { findSponsor, sponsorKey } from './store.ts'

export const DELEGATE_USAGE = `Usage: npm run latch -- delegate <command>

  delegate address               Print the delegate's address (the same on every chain)
  delegate deploy --chain <id> (--key-file <path> | --key-env <VAR> | --app <id>)
                  [--rpc-url <url>] [--json]
                                 Deploy the delegate to a chain through the deterministic-
                                 deployment proxy (CREATE2, salt zero), the key's account paying
                                 (--app: the app's sponsor on that chain, through the app's node);
                                 nothing is sent when it is already there. The node: --rpc-url,
                                 else the app's, else LATCH_RPC_URL_<chainId>, else the chain's
                                 public node
`

function keyFrom(values: { 'key-file'?: string; 'key-env'?: string }, io: CliIo): Hex | string {
  const file = values['key-file']
  const envName = values['key-env']
  if ((file === undefined) === (envName === undefined)) {
    return 'delegate deploy needs exactly one of --key-file, --key-env and --app'
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
  let key: string
  let appRpcUrl: string | undefined
  if (values.app !== undefined) {
    if (values['key-file'] !== undefined || values['key-env'] !== undefined) {
      io.err(
        `delegate deploy needs exactly one of --key-file, --key-env and --app\n\n${DELEGATE_USAGE}`,
      )
      return 2
    }
    const sponsor = await sponsorOf(values.app, chainId, io)
    if (typeof sponsor === 'string') {
      io.err(sponsor)
      return 1
    }
    ;({ key, rpcUrl: appRpcUrl } = sponsor)
  } else {
    key = keyFrom(values, io)
  }
  if (!key.startsWith('0x')) {
    io.err(`${key}\n\n${DELEGATE_USAGE}`)
    return 2
  }
  const rpcUrl =
    values['rpc-url'] ??
    appRpcUrl ??
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

/** The app's sponsor key on the chain and the app's node for it; or what is missing. */
async function sponsorOf(
  appId: string,
  chainId: number,
  io: CliIo,
): Promise<{ key: Hex; rpcUrl: string | undefined } | string> {
  const services = await openServices({ env: io.env, log: io.err })
  try {
    const deps = services.deps
    const app = await findApp(deps, appId)
    if (!app) return `No app with id '${appId}'`
    const sponsor = await findSponsor(deps, appId, chainId)
    if (!sponsor) return `App ${appId} has no sponsor on chain ${chainId} (sponsor create)`
    const rpcUrl = getChain(chainId) ? rpcUrlFor(deps.config, app, chainId) : undefined
    return { key: await sponsorKey(deps, sponsor.id), rpcUrl }
  } finally {
    await services.close()
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
      app: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })
}
