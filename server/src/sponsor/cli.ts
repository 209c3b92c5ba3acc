/**
 * `latch sponsor …`: an app's sponsor per chain (the account that pays its users' batches) and
 * its policy, on the database as `latch apps` is (the operator API has the same under
 * /api/v1/operator/apps/{id}/sponsors).
 */
import { parseArgs } from 'node:util'
import { BaseError, LatchError } from '@latch/shared'
import { formatEther, isAddress, parseEther, toFunctionSelector } from 'viem'
import type { CliIo } from '../cli-io.ts'
import { openServices } from '../index.ts'
import {
  createSponsor,
  findSponsor,
  listSponsors,
  type PolicyPatch,
  type Sponsor,
  spentTodayOfApp,
  updatePolicy,
} from './store.ts'

export const SPONSOR_USAGE = `Usage: npm run latch -- sponsor <command>

  sponsor create --app <id> --chain <id> [--json]
                                 Make the app's sponsor on a chain: a new account (its key
                                 sealed under LATCH_SECRET) that pays for the app's users'
                                 batches. Fund its address; it pays for nothing until a policy
                                 lists contracts
  sponsor list --app <id> [--json]
                                 The app's sponsors: chain, address, policy, spent today
  sponsor policy --app <id> --chain <id> [settings] [--json]
                                 Change what the sponsor pays for:
    --allow <address>[:<function>]
                                 Pay for calls to a contract: every function, or the one named
                                 by selector (0x095ea7b3) or signature (approve(address,uint256));
                                 repeatable
    --disallow <address>         Pay for no call to this contract any more; repeatable
    --gas-cap <gas>              The most gas one batch may be given
    --user-daily <amount>        The most one user's batches cost the sponsor per UTC day
    --app-daily <amount>         The most all the app's batches cost it per UTC day
                                 (amounts in wei, or in ETH with the unit: 0.01eth)

The delegate contract must be on the chain (npm run latch -- delegate deploy).
`

const options = {
  app: { type: 'string' },
  chain: { type: 'string' },
  allow: { type: 'string', multiple: true },
  disallow: { type: 'string', multiple: true },
  'gas-cap': { type: 'string' },
  'user-daily': { type: 'string' },
  'app-daily': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

class UsageError extends BaseError {
  override readonly name = 'UsageError'
}

/** Wei from '123' (wei) or '0.01eth'. */
export function parseAmount(value: string, flag: string): string {
  const v = value.trim().toLowerCase()
  try {
    if (v.endsWith('eth')) return parseEther(v.slice(0, -3).trim()).toString()
    if (/^[0-9]+$/.test(v)) return BigInt(v).toString()
  } catch {
    // Falls through to the usage error.
  }
  throw new UsageError(`--${flag} takes wei (1000000000) or ETH with its unit (0.01eth)`)
}

/** The selector of '0x095ea7b3' or 'approve(address,uint256)'. */
function selectorOf(fn: string): string {
  if (/^0x[0-9a-fA-F]{8}$/.test(fn)) return fn.toLowerCase()
  try {
    return toFunctionSelector(fn.startsWith('function ') ? fn : `function ${fn}`)
  } catch {
    throw new UsageError(`'${fn}' is neither a selector (0x and 8 hex) nor a function signature`)
  }
}

/** The policy patch the flags describe, over the sponsor's current contracts. */
export function policyPatch(
  v: {
    allow?: string[]
    disallow?: string[]
    'gas-cap'?: string
    'user-daily'?: string
    'app-daily'?: string
  },
  current: Sponsor['policy'],
): PolicyPatch {
  const patch: PolicyPatch = {}
  const contracts: Record<string, string[]> = {}
  for (const entry of v.allow ?? []) {
    const at = entry.indexOf(':')
    const address = (at < 0 ? entry : entry.slice(0, at)).trim()
    if (!isAddress(address, { strict: false })) {
      throw new UsageError(`--allow takes <address>[:<function>], not '${entry}'`)
    }
    const key = address.toLowerCase()
    const before = contracts[key] ?? current.contracts[key] ?? []
    if (at < 0) contracts[key] = ['*']
    else if (before.includes('*')) contracts[key] = before
    else contracts[key] = [...before, selectorOf(entry.slice(at + 1).trim())]
  }
  for (const address of v.disallow ?? []) {
    if (!isAddress(address, { strict: false })) {
      throw new UsageError(`--disallow takes an address, not '${address}'`)
    }
    contracts[address.toLowerCase()] = []
  }
  if (Object.keys(contracts).length > 0) patch.contracts = contracts
  if (v['gas-cap'] !== undefined) {
    if (!/^[0-9]+$/.test(v['gas-cap'])) throw new UsageError('--gas-cap takes a whole number')
    patch.gasCapPerBatch = Number(v['gas-cap'])
  }
  if (v['user-daily'] !== undefined) patch.userDailyWei = parseAmount(v['user-daily'], 'user-daily')
  if (v['app-daily'] !== undefined) patch.appDailyWei = parseAmount(v['app-daily'], 'app-daily')
  return patch
}

/** A sponsor as the CLI and the operator API show it. */
export interface SponsorView {
  chainId: number
  address: string
  policy: Sponsor['policy']
  spentTodayWei: string
}

export function describeSponsor(s: SponsorView): string {
  const contracts = Object.entries(s.policy.contracts)
  return [
    `chain ${s.chainId}: sponsor ${s.address}`,
    `  pays for        ${contracts.length ? '' : '(nothing yet: --allow a contract)'}`,
    ...contracts.map(
      ([a, sel]) => `    ${a}  ${sel.includes('*') ? 'any function' : sel.join(', ')}`,
    ),
    `  gas cap        ${s.policy.gasCapPerBatch} per batch`,
    `  per user/day   ${formatEther(BigInt(s.policy.userDailyWei))} ETH`,
    `  per app/day    ${formatEther(BigInt(s.policy.appDailyWei))} ETH`,
    `  spent today    ${formatEther(BigInt(s.spentTodayWei))} ETH`,
  ].join('\n')
}

function chainOf(value: string | undefined, command: string): number {
  const id = Number(value)
  if (!value || !Number.isSafeInteger(id) || id <= 0) {
    throw new UsageError(`sponsor ${command} needs --chain <id>`)
  }
  return id
}

export async function sponsorCommand(argv: string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true })
  } catch (e) {
    io.err(`${(e as Error).message}\n\n${SPONSOR_USAGE}`)
    return 2
  }
  const { values: v, positionals } = parsed
  const [sub] = positionals
  if (v.help || sub === 'help' || !sub) {
    io.out(SPONSOR_USAGE)
    return sub || v.help ? 0 : 2
  }
  if (!['create', 'list', 'policy'].includes(sub) || positionals.length > 1) {
    io.err(`Unknown command: sponsor ${positionals.join(' ')}\n\n${SPONSOR_USAGE}`)
    return 2
  }
  try {
    if (!v.app) throw new UsageError(`sponsor ${sub} needs --app <id>`)
    const chainId = sub === 'list' ? 0 : chainOf(v.chain, sub)
    const services = await openServices({ env: io.env, log: io.err })
    try {
      const deps = services.deps
      const app = v.app
      if (
        !(await deps.db.selectFrom('apps').select('id').where('id', '=', app).executeTakeFirst())
      ) {
        io.err(`No app with id '${app}'`)
        return 1
      }
      const view = async (s: Sponsor): Promise<SponsorView> => ({
        chainId: s.chainId,
        address: s.address,
        policy: s.policy,
        spentTodayWei: (await spentTodayOfApp(deps.db, s.id, deps.clock.now())).toString(),
      })
      if (sub === 'list') {
        const all = await Promise.all((await listSponsors(deps, app)).map(view))
        if (v.json) io.out(JSON.stringify(all, null, 2))
        else if (all.length === 0) io.out(`App ${app} has no sponsor yet (sponsor create)`)
        else io.out(all.map(describeSponsor).join('\n\n'))
        return 0
      }
      if (sub === 'create') {
        const s = await view(await createSponsor(deps, app, chainId))
        io.out(
          v.json
            ? JSON.stringify(s, null, 2)
            : `Created the sponsor of app ${app} on chain ${chainId}: fund ${s.address}, then set what it pays for (sponsor policy)\n${describeSponsor(s)}`,
        )
        return 0
      }
      const current = await findSponsor(deps, app, chainId)
      if (!current) {
        io.err(`App ${app} has no sponsor on chain ${chainId} (sponsor create)`)
        return 1
      }
      const patch = policyPatch(v, current.policy)
      if (Object.keys(patch).length === 0) throw new UsageError('sponsor policy needs a setting')
      const s = await view(await updatePolicy(deps, app, chainId, patch))
      io.out(
        v.json ? JSON.stringify(s, null, 2) : `Updated the sponsor's policy\n${describeSponsor(s)}`,
      )
      return 0
    } finally {
      await services.close()
    }
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`${e.message}\n\n${SPONSOR_USAGE}`)
      return 2
    }
    io.err(`Error: ${e instanceof LatchError ? e.message : (e as Error).message}`)
    return 1
  }
}
