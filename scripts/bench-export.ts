/**
 * `npm run bench -- export [--runs N]`: key export and the EIP-1193 provider:
 * - gzip size of the key export page's JavaScript and stylesheet (what export.html loads);
 * - gzip size of the provider chunk (provider.js, loaded on the first getEthereumProvider())
 *   beside sdk.js, which only imports it;
 * - the export page in headless Chromium (wallet-frame/src/harness.ts: the built page served by
 *   the real API, framed by a stand-in modal on another site): `latch:export:show` arms the
 *   page, then from the visitor's click on Reveal (a trusted click) to the key on screen, the
 *   device share asked of the wallet frame and the auth share of the API, median over ≥ 20 runs.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { closeWorkerBrowsers } from '../e2e/src/harness.ts'
import { buildHostSdk } from '../host-sdk/build.ts'
import { startWalletHarness } from '../wallet-frame/src/test/harness.ts'
import { median } from './median.ts'

const MIN_RUNS = 20
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`

export default async function run(args: string[]): Promise<void> {
  const i = args.indexOf('--runs')
  const runs = Math.max(MIN_RUNS, i >= 0 ? Number(args[i + 1]) || MIN_RUNS : MIN_RUNS)
  console.log(`machine: ${cpus().length} cores, load ${loadavg()[0]?.toFixed(1)}`)

  const sdkDir = mkdtempSync(join(tmpdir(), 'latch-bench-export-sdk-'))
  try {
    await buildHostSdk({ outDir: sdkDir })
    const size = (file: string) => gzipSync(readFileSync(join(sdkDir, file)), { level: 9 }).length
    console.log(`provider.js: ${kb(size('provider.js'))} gzip (budget 4 KB)`)
    console.log(`sdk.js: ${size('sdk.js')} B gzip (budget 6144 B; it only imports provider.js)`)
  } finally {
    rmSync(sdkDir, { recursive: true, force: true })
  }

  const h = await startWalletHarness()
  try {
    const html = readFileSync(join(h.distDir, 'export.html'), 'utf8')
    const assets = [...html.matchAll(/(?:src|href)="\/embedded-wallets\/assets\/([^"]+)"/g)]
      .map((m) => m[1] as string)
      .map((file) => ({
        file,
        gzip: gzipSync(readFileSync(join(h.distDir, 'assets', file))).length,
      }))
    const js = assets.filter((a) => a.file.endsWith('.js')).reduce((s, a) => s + a.gzip, 0)
    const css = assets.filter((a) => a.file.endsWith('.css')).reduce((s, a) => s + a.gzip, 0)
    console.log(`export page: ${kb(js)} JS + ${kb(css)} CSS gzip (budget 70 KB JS)`)

    const page = await h.browser.newPage()
    await page.goto(h.modalUrl(h.modalOrigin, 15_000))
    const auth = await h.signIn(page, `bench.export.${Date.now()}@bench.test`)
    const created = await h.call(page, 'latch:wallet:create', { accessToken: auth.token })
    const address = created.ok?.address
    if (!address) throw new Error(`create: ${JSON.stringify(created)}`)
    const times: number[] = []
    for (let r = 0; r < runs; r++) {
      // A fresh modal: its wallet frame recovers (automatic), then the export page shows the key.
      await page.goto(h.modalUrl(h.modalOrigin, 15_000, h.appId, `address=${address}`))
      const recovered = await h.call(page, 'latch:wallet:recover', {
        address,
        accessToken: auth.token,
      })
      if (recovered.error) throw new Error(`recover: ${recovered.error.message}`)
      await page.evaluate(
        async ([a, t]) => {
          const w = window as unknown as { exportCall(arg: unknown): Promise<{ error?: unknown }> }
          const answer = await w.exportCall({ address: a, accessToken: t })
          if (answer.error) throw new Error(JSON.stringify(answer.error))
        },
        [address, auth.token] as const,
      )
      const handle = await page.locator('#export').elementHandle()
      const frame = await handle?.contentFrame()
      if (!frame) throw new Error('no export frame')
      // Timed inside the page: from the click (seen first, in the document's capture phase)
      // to the key's text in the document.
      await frame.evaluate(() => {
        const key = document.getElementById('key') as HTMLElement
        const timed = new Promise<number>((resolve) => {
          let clicked = 0
          document.addEventListener('click', () => (clicked = performance.now()), { capture: true })
          new MutationObserver(() => {
            if (key.textContent) resolve(performance.now() - clicked)
          }).observe(key, { childList: true, characterData: true, subtree: true })
        })
        ;(window as unknown as { timed: Promise<number> }).timed = timed
      })
      await frame.locator('#reveal').click({ timeout: 15_000 })
      const ms = await frame.evaluate(() =>
        Promise.race([
          (window as unknown as { timed: Promise<number> }).timed,
          new Promise<number>((_, reject) => setTimeout(() => reject(new Error('no key')), 15_000)),
        ]),
      )
      times.push(ms)
    }
    console.log(
      `export page, Reveal click to key on screen, median of ${runs}: ${median(times).toFixed(0)} ms`,
    )
  } finally {
    await h.close()
    // The harness takes the process's shared Chromium; nothing else uses it here.
    await closeWorkerBrowsers()
  }
}
