// @vitest-environment node
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { buildHostSdk } from '../build.ts'

/** What every host page loads, per file: 6 KB gzip. */
const BUDGET_BYTES = 6 * 1024

let outDir: string

beforeAll(async () => {
  outDir = mkdtempSync(join(tmpdir(), 'latch-sdk-size-'))
  await buildHostSdk({ outDir })
}, 60_000)

afterAll(() => {
  rmSync(outDir, { recursive: true, force: true })
})

test.each(['sdk.js', 'latch.js'])('behavior: %s stays within 6 KB gzip', (file) => {
  const code = readFileSync(join(outDir, file))
  const gzipped = gzipSync(code).length
  console.log(`${file}: ${code.length} bytes, ${gzipped} bytes gzip (budget ${BUDGET_BYTES})`)
  expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES)
})

/** The wallet bridge, loaded only when the modal first asks for wallets: 4 KB gzip. */
const BRIDGE_BUDGET_BYTES = 4 * 1024

test('behavior: wallet-bridge.js stays within 4 KB gzip, an ES module exporting createBridge', () => {
  const code = readFileSync(join(outDir, 'wallet-bridge.js'))
  const gzipped = gzipSync(code).length
  console.log(
    `wallet-bridge.js: ${code.length} bytes, ${gzipped} bytes gzip (budget ${BRIDGE_BUDGET_BYTES})`,
  )
  expect(gzipped).toBeLessThanOrEqual(BRIDGE_BUDGET_BYTES)
  const text = code.toString('utf8')
  expect(text).toMatch(/export\s*\{[^}]*\bcreateBridge\b/)
  // Its catalogue: the provider codes it maps and its own, not the rest.
  expect(text).toContain('Wallet request timed out')
  expect(text).toContain('Request already pending')
  expect(text).not.toContain('Invalid or expired verification code')
  // The SDK itself stays out of it, and the bridge out of the SDK.
  expect(text).not.toContain('penpal')
  expect(readFileSync(join(outDir, 'sdk.js'), 'utf8')).not.toContain('eip6963')
})

test('behavior: sdk.js is a minified IIFE and latch.js an ES module exporting createLatch', () => {
  const script = readFileSync(join(outDir, 'sdk.js'), 'utf8')
  const esm = readFileSync(join(outDir, 'latch.js'), 'utf8')
  expect(script.trimStart().startsWith('(function')).toBe(true)
  expect(script).not.toMatch(/\bexport\b\s*\{/)
  expect(script.split('\n').length).toBeLessThanOrEqual(3)
  expect(esm).toMatch(/export\s*\{[^}]*\bcreateLatch\b/)
  // Nothing of zod, and only the catalogue entries the SDK raises.
  expect(esm).not.toContain('$ZodType')
  expect(esm).toContain('Cannot initialize the provider with an invalid app ID')
  expect(esm).not.toContain('Invalid or expired verification code')
})

/** The EIP-1193 provider, loaded on the first getEthereumProvider(): 4 KB gzip. */
const PROVIDER_BUDGET_BYTES = 4 * 1024

test('behavior: provider.js stays within 4 KB gzip, an ES module whose default export makes the provider, apart from the SDK', () => {
  const code = readFileSync(join(outDir, 'provider.js'))
  const gzipped = gzipSync(code).length
  console.log(
    `provider.js: ${code.length} bytes, ${gzipped} bytes gzip (budget ${PROVIDER_BUDGET_BYTES})`,
  )
  expect(gzipped).toBeLessThanOrEqual(PROVIDER_BUDGET_BYTES)
  const text = code.toString('utf8')
  expect(text).toMatch(/export\s*\{[^}]*\bas default\b/)
  expect(text).toContain('eip6963:announceProvider')
  expect(text).not.toContain('penpal')
  // The SDK only imports it.
  const sdk = readFileSync(join(outDir, 'sdk.js'), 'utf8')
  expect(sdk).toContain('provider.js')
  expect(sdk).not.toContain('eip6963:announceProvider')
})
