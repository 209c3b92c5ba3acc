/**
 * Builds the host SDK: dist/sdk.js (the one-line script, IIFE) and dist/latch.js (the ESM entry),
 * both minified. Run with `tsx host-sdk/build.ts`.
 *
 * Both must stay under 6 KB gzip (size.test.ts). Two things keep them there: shared modules are
 * treated as side-effect free (nothing of shared/src runs at import), and the error catalogue is
 * cut to the codes the SDK can raise. A first build with an empty catalogue shows which codes the
 * bundle names; the real build keeps exactly those entries, taken from the catalogue itself.
 */
import { fileURLToPath } from 'node:url'
import { ERRORS } from '@latch/shared'
import { build, type InlineConfig, type Plugin } from 'vite'

const ROOT = fileURLToPath(new URL('.', import.meta.url))
const CATALOGUE = /export const ERRORS = \{[\s\S]*?\n\} as const/

function errorCatalogue(codes: ReadonlySet<string>): Plugin {
  return {
    name: 'latch-error-catalogue',
    enforce: 'pre',
    transform(code, id) {
      if (!id.replaceAll('\\', '/').endsWith('/shared/src/errors.ts')) return null
      if (!CATALOGUE.test(code)) this.error('the ERRORS catalogue was not found in errors.ts')
      const kept = Object.fromEntries(Object.entries(ERRORS).filter(([code]) => codes.has(code)))
      return code.replace(CATALOGUE, () => `export const ERRORS = ${JSON.stringify(kept)} as const`)
    },
  }
}

/**
 * Two parts of penpal are dead code here, and cutting them keeps the SDK in its budget:
 * - its debug messages: the SDK never passes a `log` function, so each `log?.(...)` becomes a call
 *   on undefined, which the minifier drops with its strings;
 * - its translation for children running penpal 6 or older: the modal runs penpal 7.
 * The edits are exact; if penpal's text changes, the build fails here instead of growing.
 */
const PENPAL_EDITS: [RegExp, string][] = [
  [/\b(?:this\.#)?log\?\.\(/g, '(void 0)?.('],
  [/this\.#isChildUsingDeprecatedProtocol = true;/g, ''],
  [/this\.#isChildUsingDeprecatedProtocol\b/g, 'false'],
  [/if \(isDeprecatedMessage\(data\)\)/g, 'if (false)'],
]
const penpalTrimmed: Plugin = {
  name: 'latch-penpal-trimmed',
  transform(code, id) {
    if (!/[\\/]penpal[\\/]dist[\\/]penpal\.mjs$/.test(id)) return null
    let out = code
    for (const [pattern, replacement] of PENPAL_EDITS) {
      if (out.search(pattern) < 0) this.error(`penpal changed: ${pattern} not found`)
      out = out.replace(pattern, replacement)
    }
    return out
  },
}

type Format = 'iife' | 'es'

function config(
  format: Format,
  codes: ReadonlySet<string>,
  outDir: string,
  write: boolean,
): InlineConfig {
  const entry = format === 'iife' ? 'src/script.ts' : 'src/index.ts'
  const fileName = format === 'iife' ? 'sdk.js' : 'latch.js'
  return {
    configFile: false,
    root: ROOT,
    logLevel: 'warn',
    plugins: [errorCatalogue(codes), penpalTrimmed],
    build: {
      outDir,
      emptyOutDir: false,
      write,
      copyPublicDir: false,
      target: 'es2022',
      minify: true,
      sourcemap: false,
      // Library mode keeps the ESM entry's exports; the IIFE's name is never used (no exports).
      lib: { entry, formats: [format], fileName: () => fileName, name: 'LatchSdk' },
      rolldownOptions: {
        treeshake: {
          moduleSideEffects: (id) => (/[\\/]shared[\\/]src[\\/]/.test(id) ? false : undefined),
        },
        output: { minify: true },
      },
    },
  }
}

/** The rendered code of each module in the bundle, by module id. */
async function bundleModules(format: Format): Promise<Map<string, string>> {
  const result = await build(config(format, new Set(), 'dist', false))
  const modules = new Map<string, string>()
  for (const output of Array.isArray(result) ? result : [result]) {
    if (!('output' in output)) continue
    for (const chunk of output.output) {
      if (chunk.type !== 'chunk') continue
      for (const [id, module] of Object.entries(chunk.modules)) modules.set(id, module.code ?? '')
    }
  }
  return modules
}

/**
 * Error codes the bundle can raise, found by building it with an empty catalogue: every code
 * the SDK's modules name, and those errors.ts itself raises with `LatchError.of` (its other
 * mentions, such as the list of error types, raise nothing).
 */
export async function usedErrorCodes(): Promise<Set<string>> {
  const used = new Set<string>()
  for (const format of ['iife', 'es'] as const) {
    for (const [id, code] of await bundleModules(format)) {
      const pattern = id.replaceAll('\\', '/').endsWith('/shared/src/errors.ts')
        ? /LatchError\.of\(\s*["'`]([a-z0-9_]+)["'`]/g
        : /["'`]([a-z0-9_]+)["'`]/g
      for (const [, literal] of code.matchAll(pattern)) {
        if (literal && Object.hasOwn(ERRORS, literal)) used.add(literal)
      }
    }
  }
  return used
}

/** Builds dist/sdk.js and dist/latch.js (or into `outDir`). */
export async function buildHostSdk(options: { outDir?: string } = {}): Promise<void> {
  const outDir = options.outDir ?? 'dist'
  const codes = await usedErrorCodes()
  for (const format of ['iife', 'es'] as const) await build(config(format, codes, outDir, true))
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildHostSdk()
}
