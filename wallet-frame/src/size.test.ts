// @vitest-environment node
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { LOCALES } from '@latch/shared/i18n'
import { afterAll, expect, test } from 'vitest'
import { buildWalletFrame } from '../build.ts'

/**
 * The wallet frame's budget, with ethers hashing, encoding and signing in it, the batch review
 * it draws for sponsored batches (EIP-712 batch, EIP-7702 authorization, decoded calls), and
 * approvals that name their method and arm only with what they approve in view (arm.ts); the
 * export page's JavaScript counts too. The figure is printed.
 */
const BUDGET_BYTES = 95 * 1024

/** The message table's locale chunks (shared/src/i18n/load.ts). */
const LOCALE_CHUNK = new RegExp(`^(${LOCALES.filter((l) => l !== 'en').join('|')})-[\\w-]+\\.js$`)

let dir = ''
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

test('behavior: the wallet frame ships at most 95 KB gzip of JavaScript, all from its own origin', async () => {
  dir = await mkdtemp(join(tmpdir(), 'latch-wallet-frame-build-'))
  await buildWalletFrame({ outDir: dir })
  const html = await readFile(join(dir, 'index.html'), 'utf8')
  // Every script is a file the API serves under /embedded-wallets/assets (CSP script-src 'self').
  expect(html).not.toMatch(/<script(?![^>]*\bsrc="\/embedded-wallets\/assets\/)/)
  let total = 0
  for (const file of await readdir(join(dir, 'assets'))) {
    // The export page's languages: one chunk each, loaded only for a visitor speaking it.
    if (LOCALE_CHUNK.test(file)) continue
    if (!file.endsWith('.js')) continue
    const code = await readFile(join(dir, 'assets', file))
    // Penpal's debug lines are not built in (scripts/frontend-plugins.ts).
    expect(code.toString('utf8')).not.toContain('handshake SYN')
    total += gzipSync(code).length
  }
  console.info(`wallet frame JS: ${(total / 1024).toFixed(1)} KB gzip (${total} B)`)
  expect(total).toBeGreaterThan(0)
  expect(total).toBeLessThanOrEqual(BUDGET_BYTES)
}, 60_000)

/** The key export page's own JavaScript: what export.html loads, its shared chunk included. */
const EXPORT_BUDGET_BYTES = 70 * 1024

test('behavior: the key export page loads at most 70 KB gzip of JavaScript and one stylesheet, all from its own origin', async () => {
  if (!dir) {
    dir = await mkdtemp(join(tmpdir(), 'latch-wallet-frame-build-'))
    await buildWalletFrame({ outDir: dir })
  }
  const html = await readFile(join(dir, 'export.html'), 'utf8')
  expect(html).toContain('%LATCH_MODAL_ORIGIN%')
  expect(html).not.toMatch(/<script(?![^>]*\bsrc="\/embedded-wallets\/assets\/)/)
  expect(html).not.toMatch(/\sstyle=/)
  const files = [...html.matchAll(/(?:src|href)="\/embedded-wallets\/assets\/([^"]+\.js)"/g)].map(
    (m) => m[1] as string,
  )
  expect(files.length).toBeGreaterThan(0)
  let total = 0
  for (const file of files) total += gzipSync(await readFile(join(dir, 'assets', file))).length
  console.info(`export page JS: ${(total / 1024).toFixed(1)} KB gzip (${files.join(', ')})`)
  expect(total).toBeLessThanOrEqual(EXPORT_BUDGET_BYTES)
}, 60_000)
