/**
 * `npm run bench -- <name> [args]`: runs the default export `run(args)` of scripts/bench-<name>.ts.
 *   server  e-mail sign-in and refresh throughput and latency on PGlite and PostgreSQL
 *   frames  (scripts/bench-frames.ts, from the frames engineer)
 *   wallet  the in-app wallet frame: size, create and passcode recovery in Chromium
 *   sign    signMessage(): to the sign screen, and Sign and continue to the signature
 *   export  key export page and provider chunk sizes; the export page showing the key
 *   batch   a batch the app pays for: the visitor's click in the frame → the sponsor's transaction
 *   pglite-load  an in-memory PGlite started from the migrated dump, as is and checkpointed
 */
import { existsSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const available = readdirSync(here)
  .map((f) => /^bench-(.+)\.ts$/.exec(f)?.[1])
  .filter((n): n is string => !!n)

const [name, ...args] = process.argv.slice(2)
if (!name || !/^[a-z0-9-]+$/.test(name)) {
  console.error(`Usage: npm run bench -- <name>   (available: ${available.join(', ') || 'none'})`)
  process.exit(2)
}
const file = join(here, `bench-${name}.ts`)
if (!existsSync(file)) {
  console.error(`No benchmark '${name}' (available: ${available.join(', ') || 'none'})`)
  process.exit(2)
}
const mod = (await import(pathToFileURL(file).href)) as { default?: (args: string[]) => unknown }
if (typeof mod.default !== 'function') {
  console.error(`scripts/bench-${name}.ts has no default export run()`)
  process.exit(2)
}
await mod.default(args)
