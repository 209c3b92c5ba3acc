import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

/**
 * The host SDK's sources for the workspaces that bundle it (react, wagmi): its package.json
 * exports the built package, as published.
 */
const HOST_SDK_SOURCES = [
  { find: /^@latch\/host-sdk$/, replacement: 'host-sdk/src/index.ts' },
  { find: /^@latch\/host-sdk\/shared-client$/, replacement: 'host-sdk/src/shared-client.ts' },
].map(({ find, replacement }) => ({
  find,
  replacement: fileURLToPath(new URL(replacement, import.meta.url)),
}))

/** One configuration: a Vitest project per workspace. */
export default defineConfig({
  test: {
    // One worker per core (Vitest's default leaves one core to itself: on CI's 2 cores that is
    // one worker, one file at a time). The e2e specs share the workers with the unit files: each
    // starts its own servers and chain on ports it picks, on the worker's Chromium (a context per
    // test), and the frontend build and the PGlite template are made once per run, before the
    // workers (e2e/src/global-setup.ts).
    maxWorkers: '100%',
    // The Node projects that start servers share each worker's modules across their test files
    // (a file still gets its own servers, databases and browser contexts, and stops them in its
    // afterAll): the server, Playwright and the build tools are imported once per worker instead
    // of once per file. The DOM projects, whose files mock modules and render into one document,
    // and `shared`, whose tests check what a module graph loads, stay isolated.
    projects: [
      {
        // A bound, not a speed goal: property tests and Intl's first use take seconds on a busy
        // machine.
        test: {
          name: 'shared',
          root: 'shared',
          environment: 'node',
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'server',
          root: 'server',
          environment: 'node',
          isolate: false,
          // One PostgreSQL and one migrated PGlite data folder for the run (see the file).
          globalSetup: ['src/testing/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        // Argon2id at 19 MiB and Chromium-driven tests: seconds each on a quiet machine, several
        // times that on a loaded one; a bound, not a speed goal (benchmarks hold those).
        test: {
          name: 'wallet-frame',
          root: 'wallet-frame',
          environment: 'node',
          isolate: false,
          globalSetup: ['../server/src/testing/global-setup.ts'],
          testTimeout: 30_000,
        },
      },
      { test: { name: 'host-sdk', root: 'host-sdk', environment: 'jsdom' } },
      {
        test: {
          name: 'server-sdk',
          root: 'server-sdk',
          environment: 'node',
          isolate: false,
          testTimeout: 30_000,
        },
      },
      {
        resolve: { alias: HOST_SDK_SOURCES },
        test: { name: 'react', root: 'react', environment: 'jsdom' },
      },
      {
        resolve: { alias: HOST_SDK_SOURCES },
        test: { name: 'wagmi', root: 'wagmi', environment: 'node', isolate: false },
      },
      {
        // React DOM, the default build's renderer (modal-app/renderer.ts): no aliases. The
        // Preact build is checked by modal-app/size.test.ts and e2e/src/preact-build.spec.ts.
        test: {
          name: 'modal-app',
          root: 'modal-app',
          environment: 'jsdom',
          // Unmounts what each test rendered and stops the file's timers before jsdom goes.
          setupFiles: ['src/test/setup.ts'],
          // A bound, not a speed goal: property tests and screens that wait out SPEC's timers
          // take seconds on a quiet machine and several times that beside browsers.
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'e2e',
          root: 'e2e',
          environment: 'node',
          isolate: false,
          include: ['src/**/*.spec.ts'],
          // The frontend build and the PGlite template, once before the workers (see the file).
          globalSetup: ['src/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
})
