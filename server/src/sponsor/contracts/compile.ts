/**
 * Compiles the delegate (and the test contracts) from source with solc-js (pure JS, no download).
 * The delegate's bytecode is also checked in (`../delegate-artifact.ts`): its CREATE2 address is
 * what the server and the wallet frame accept as the only delegation, and a production server
 * has no compiler. The test contracts (`test/TestToken.sol`: the demo's token and the tests'
 * spender and reentrancy probe) are checked in the same way (`test/artifact.ts`), so the demo,
 * the benches and the tests deploy them without loading the compiler (seconds of CPU per
 * process). `delegate.test.ts` compiles both again and compares; after changing a Solidity
 * source, write the artifacts again:
 *   npx tsx server/src/sponsor/contracts/compile.ts
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import solc from 'solc'
import type { Abi, Hex } from 'viem'

const here = dirname(fileURLToPath(import.meta.url))

export interface Compiled {
  abi: Abi
  bytecode: Hex
}

interface Output {
  errors?: { severity: string; formattedMessage: string }[]
  contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>
}

/** Every contract of the given files (paths relative to this folder), by name. */
export function compile(files: readonly string[]): Record<string, Compiled> {
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(
      files.map((f) => [f, { content: readFileSync(join(here, f), 'utf8') }]),
    ),
    settings: {
      optimizer: { enabled: true, runs: 200 },
      // Transient storage (the reentrancy lock) needs Cancun; delegation needs Prague anyway.
      evmVersion: 'prague',
      // No metadata trailer: the bytecode, hence the CREATE2 address, depends on the code only.
      metadata: { appendCBOR: false },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as Output
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error')
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'))
  const out: Record<string, Compiled> = {}
  for (const contracts of Object.values(output.contracts)) {
    for (const [name, c] of Object.entries(contracts)) {
      out[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` }
    }
  }
  return out
}

export function compileDelegate(): Compiled & { compiler: string } {
  const delegate = compile(['LatchDelegate.sol']).LatchDelegate
  if (!delegate) throw new Error('LatchDelegate.sol has no LatchDelegate contract')
  return { ...delegate, compiler: solc.version() }
}

/** The artifact's source text, as checked in. */
export function artifactSource(c: Compiled & { compiler: string }): string {
  return `/**
 * LatchDelegate as compiled by solc ${c.compiler} (contracts/compile.ts writes this file;
 * delegate.test.ts compiles the source again and compares).
 */
export const LATCH_DELEGATE_COMPILER = '${c.compiler}'

export const LATCH_DELEGATE_ABI = ${JSON.stringify(c.abi, null, 2)} as const

export const LATCH_DELEGATE_BYTECODE =
  '${c.bytecode}' as const
`
}

/** The test contracts' artifact's source text, as checked in. */
export function testArtifactSource(contracts: Record<string, Compiled>, compiler: string): string {
  const entries = Object.keys(contracts)
    .sort()
    .map((name) => {
      const c = contracts[name] as Compiled
      return `  ${name}: {\n    abi: ${JSON.stringify(c.abi)},\n    bytecode: '${c.bytecode}',\n  },`
    })
  return `/**
 * The contracts of TestToken.sol as compiled by solc ${compiler} (../compile.ts writes this
 * file; delegate.test.ts compiles the source again and compares).
 */
import type { Compiled } from '../compile.ts'

export const TEST_CONTRACTS: Readonly<Record<string, Compiled>> = {
${entries.join('\n')}
}
`
}

/** The contracts of `test/TestToken.sol`, compiled. */
export const compileTestContracts = (): Record<string, Compiled> => compile([TEST_SOURCE])
const TEST_SOURCE = 'test/TestToken.sol'

const isMain = process.argv[1]?.endsWith('/sponsor/contracts/compile.ts')
if (isMain) {
  const target = join(here, '..', 'delegate-artifact.ts')
  writeFileSync(target, artifactSource(compileDelegate()))
  console.log(`wrote ${target}`)
  const tests = join(here, 'test', 'artifact.ts')
  writeFileSync(tests, testArtifactSource(compileTestContracts(), solc.version()))
  console.log(`wrote ${tests}`)
}
