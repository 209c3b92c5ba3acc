// @vitest-environment node
import { readdir, readFile, realpath } from 'node:fs/promises'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { expect, test } from 'vitest'
import { buildModalOnce } from '../e2e/src/build.ts'
import type { ModalRenderer } from './renderer.ts'

/**
 * What the landing needs: index.html's module script and what it imports statically, within
 * 90 KB gzip, with either renderer (renderer.ts). The renderer is most of it (React DOM far
 * more than Preact); the rest is the modal, penpal and the error catalogue. Screens past
 * the landing, the session fork, zod and the phone metadata load lazily (screens/lazy.tsx,
 * methods.ts, shared payloadIssues, phone.ts); the server-only error codes, penpal's debug
 * lines and Vite's general preload helper are not built in at all (build.ts). The figures are
 * printed.
 */
const LANDING_BUDGET_BYTES = 90 * 1024

/** Each renderer's mark in a built chunk, which the other build must not carry. */
const RENDERER_MARKS: Record<ModalRenderer, RegExp> = {
  // React's production errors link react.dev.
  react: /react\.dev\/errors/,
  // preact/compat maps React's onDoubleClick to the DOM's event name; React DOM has no such string.
  preact: /ondoubleclick/,
}

/** The build's JS files `entries` load, statically or lazily, by the names they import. */
async function reachable(dir: string, entries: string[]): Promise<Set<string>> {
  const seen = new Set<string>()
  const queue = [...entries]
  while (queue.length) {
    const file = queue.pop() as string
    if (seen.has(file)) continue
    seen.add(file)
    // A name in a string that is no file of the build is not followed.
    const code = await readFile(join(dir, file), 'utf8').catch(() => '')
    for (const m of code.matchAll(/(?:\.\/|assets\/)([\w.-]+\.js)\b/g)) {
      queue.push(`assets/${m[1]}`)
    }
  }
  return seen
}

test.each<ModalRenderer>(['react', 'preact'])(
  'behavior: the JavaScript before the landing stays within 90 KB gzip with %s; what it does not need is lazy',
  async (renderer) => {
    // The production build the run's browser tests load (e2e/src/build.ts: built once per run
    // and per change of the sources, with modal-app/build.ts), read through its folder's real
    // path so a build switched in meanwhile cannot mix two builds' files.
    const dir = await realpath(await buildModalOnce(renderer))
    const html = await readFile(join(dir, 'index.html'), 'utf8')
    const entries = [
      ...html.matchAll(/<(?:script|link)[^>]+(?:src|href)="\/(assets\/[^"]+\.js)"/g),
    ].map((m) => m[1] as string)
    expect(entries.length).toBeGreaterThan(0)
    let landing = 0
    for (const file of entries) {
      const code = await readFile(join(dir, file))
      // The production JSX runtime, whoever runs the build.
      expect(code.toString('utf8')).not.toContain('jsxDEV')
      // V8's compile hint, honoured only as the first line (build.ts, eagerCompileHint).
      expect(code.toString('utf8').startsWith('//# allFunctionsCalledOnLoad\n')).toBe(true)
      landing += gzipSync(code).length
      // The external wallets' code (viem's SIWE writer, the QR code) is not the landing's.
      expect(code.toString('utf8')).not.toContain('wants you to sign in with your Ethereum account')
      // Nor the in-app wallet's (the frame, its flows and screens): they load at first use.
      expect(code.toString('utf8')).not.toContain('/embedded-wallets')
      // Nor the mobile wallet apps list (@latch/shared/wallet-apps): the fork screen's chunk has
      // it.
      expect(code.toString('utf8')).not.toContain('KEYRING PRO')
      // Nor zod (its schemas keep their `_zod` internals): the landing checks with shapes.
      expect(code.toString('utf8')).not.toContain('_zod')
      // Nor any language but English (one chunk per locale), nor the screens' English.
      expect(code.toString('utf8')).not.toContain('ログイン')
      expect(code.toString('utf8')).not.toContain('Enter confirmation code')
      // Nor the codes only the user and operator APIs answer (shared's server-catalogue.ts),
      // penpal's debug lines, or Vite's own preload helper (build.ts has a lean one).
      expect(code.toString('utf8')).not.toContain('invalid_admin_key')
      expect(code.toString('utf8')).not.toContain('handshake SYN')
      expect(code.toString('utf8')).not.toContain('vite:preloadError')
    }
    const assets = await readdir(join(dir, 'assets'))
    const lazy = assets.filter((f) => f.endsWith('.js') && !entries.includes(`assets/${f}`))
    const other: ModalRenderer = renderer === 'react' ? 'preact' : 'react'
    let ownMark = false
    for (const file of assets.filter((f) => f.endsWith('.js'))) {
      const code = await readFile(join(dir, 'assets', file), 'utf8')
      // The build's renderer, and no copy of the other one in any chunk (e.g. through an entry
      // point the Preact aliases miss).
      ownMark ||= RENDERER_MARKS[renderer].test(code)
      expect(code).not.toMatch(RENDERER_MARKS[other])
    }
    expect(ownMark).toBe(true)
    for (const chunk of [
      'phone-check',
      'AwaitingPasswordlessCode',
      'AllowlistRejection',
      'WalletSection',
      'AwaitingConnection',
      'InstallWallet',
      'flows',
      'EmbeddedWallet',
      'EmbeddedWalletRecovery',
      'SessionFork',
      'i18n-load',
      'en-screens',
      ...['es', 'fr', 'de', 'pt-BR', 'ja', 'zh-CN', 'ko', 'tr', 'ar'],
    ]) {
      expect(lazy.some((f) => f.startsWith(`${chunk}-`))).toBe(true)
    }
    // The wallet SDKs run only in their connector frames: no file the modal page can reach,
    // landing or lazy, carries WalletConnect's sign client (connectors.html's files do) or
    // Coinbase Wallet's SDK, its popup protocol (coinbase.html's files do).
    const modalFiles = await reachable(dir, entries)
    const pageFiles = async (page: string) => {
      const html = await readFile(join(dir, page), 'utf8')
      const found = [...html.matchAll(/<script[^>]+src="\/(assets\/[^"]+\.js)"/g)]
      return reachable(
        dir,
        found.map((m) => m[1] as string),
      )
    }
    const carries = async (files: Set<string>, mark: string) => {
      for (const file of files) {
        if ((await readFile(join(dir, file), 'utf8')).includes(mark)) return true
      }
      return false
    }
    expect(await carries(modalFiles, 'wc_sessionPropose')).toBe(false)
    expect(await carries(await pageFiles('connectors.html'), 'wc_sessionPropose')).toBe(true)
    expect(await carries(modalFiles, 'selectSignerType')).toBe(false)
    expect(await carries(await pageFiles('coinbase.html'), 'selectSignerType')).toBe(true)
    console.info(
      `modal landing JS (${renderer}): ${(landing / 1024).toFixed(1)} KB gzip (${landing} B); lazy: ${lazy.join(', ')}`,
    )
    expect(landing).toBeLessThanOrEqual(LANDING_BUDGET_BYTES)
  },
  90_000,
)
