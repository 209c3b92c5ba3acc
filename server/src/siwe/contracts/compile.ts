/**
 * Compiles TestWallet.sol with solc-js (pure JS, no download) into test-wallet.json, the
 * artifact the SIWE tests deploy on anvil. The artifact is committed so a test run never
 * compiles; run this after changing the Solidity source:
 *   npx tsx server/src/siwe/contracts/compile.ts
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import solc from 'solc'

const here = dirname(fileURLToPath(import.meta.url))
const source = readFileSync(join(here, 'TestWallet.sol'), 'utf8')

const input = {
  language: 'Solidity',
  sources: { 'TestWallet.sol': { content: source } },
  settings: {
    optimizer: { enabled: true, runs: 200 },
    // anvil runs the latest hard fork; cancun is old enough for any node a test may use.
    evmVersion: 'cancun',
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
  },
}

interface Output {
  errors?: { severity: string; formattedMessage: string }[]
  contracts: Record<
    string,
    Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>
  >
}

const output = JSON.parse(solc.compile(JSON.stringify(input))) as Output
const errors = (output.errors ?? []).filter((e) => e.severity === 'error')
if (errors.length > 0) {
  throw new Error(errors.map((e) => e.formattedMessage).join('\n'))
}
const compiled = output.contracts['TestWallet.sol'] ?? {}
const artifact = {
  compiler: solc.version(),
  contracts: Object.fromEntries(
    Object.entries(compiled).map(([name, c]) => [
      name,
      { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` },
    ]),
  ),
}
writeFileSync(join(here, 'test-wallet.json'), `${JSON.stringify(artifact, null, 2)}\n`)
console.log(
  `test-wallet.json: ${Object.keys(artifact.contracts).join(', ')} (${artifact.compiler})`,
)
