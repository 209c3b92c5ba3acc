/** Builds @latch/node for npm: `tsx server-sdk/build.ts` (scripts/build-library.ts says what it makes). */
import { buildLibrary } from '../scripts/build-library.ts'

/** jose is the package's dependency; hono (an optional peer) only lends its types to the middleware. */
export const NODE_EXTERNAL = ['jose', 'hono']

/** `@latch/node`, `@latch/node/hono` and `@latch/node/express`. */
export const NODE_ENTRIES = { index: 'index.ts', hono: 'hono.ts', express: 'express.ts' }

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(
    await buildLibrary({
      name: 'server-sdk',
      external: NODE_EXTERNAL,
      entries: NODE_ENTRIES,
      types: ['node'],
    }),
  )
}
