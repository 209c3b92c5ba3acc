import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { configDefaults, defineConfig } from 'vitest/config'
import { SpreadWaitingSequencer } from './scripts/test-order.ts'

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

/** The host SDK's test files that need a module graph of their own. */
const HOST_SDK_ISOLATED = [
  // vi.mock of penpal.
  'src/create-latch-remote.test.ts',
  // What importing the SDK on a server does: a module another file loaded would be there.
  'src/ssr.test.ts',
]

/** The host SDK's test files that need no DOM (they build the package or start servers). */
const HOST_SDK_NODE = [
  'src/exports.test.ts',
  'src/link.test.ts',
  'src/package.test.ts',
  'src/size.test.ts',
  'src/bridge/browser.test.ts',
]

/**
 * With LATCH_FILE_CPU=<file>, the projects that run in child processes write each test file's
 * CPU and wall seconds there (scripts/file-cpu.ts).
 */
const FILE_CPU = process.env.LATCH_FILE_CPU
  ? [fileURLToPath(new URL('scripts/file-cpu.ts', import.meta.url))]
  : []

/** What the modal's three test projects share (see them below). */
const MODAL_APP_TEST = {
  root: 'modal-app',
  // Unmounts what each test rendered and stops the file's timers before jsdom goes.
  setupFiles: ['src/test/setup.ts'],
  // A bound, not a speed goal: property tests and screens that wait out SPEC's timers take
  // seconds on a quiet machine and several times that beside browsers.
  testTimeout: 20_000,
}

/** The modal's test files that need a module graph of their own (see the projects). */
const MODAL_APP_ISOLATED = [
  // vi.mock of the WalletConnect provider.
  'src/connectors/walletconnect.test.tsx',
  // Import main.tsx for what importing it does.
  'src/main.test.tsx',
  // What a lazily loaded screen does while its chunk loads and when it fails.
  'src/screens/lazy.test.tsx',
  // The setup's own teardown, as a file's last moments see it.
  'src/test/teardown.test.tsx',
]

/** The modal's test files that need no DOM. */
const MODAL_APP_NODE = [
  '*.test.ts',
  'src/startup/config.test.ts',
  'src/startup/init-gate.test.ts',
  'src/shell/theme.test.ts',
  'src/wallet/amounts.test.ts',
  'src/wallet/batch.test.ts',
  'src/wallet/decode.test.ts',
  'src/session/api.test.ts',
  'src/session/session.test.ts',
  'src/connectors/siwe.test.ts',
  'src/screens/registry.test.ts',
]

/** One configuration: a Vitest project per workspace (the modal's in three). */
export default defineConfig({
  test: {
    // One worker more than the cores (Vitest's default leaves one core to itself: on CI's 2
    // cores that is one file at a time). A fifth of two workers' run left the cores idle while
    // both waited (a browser's pause, a chain, a child process), and where other work keeps a
    // core busy the cores are shared out among what is runnable, so a third worker takes more
    // of them back (docs/performance.md, "The test suite with one core kept busy").
    // The e2e specs share the workers with the unit files: each starts its own servers and
    // chain on ports it picks, on the worker's Chromium (a context per test), and the frontend
    // build and the run's databases are made once per run, before the workers
    // (e2e/src/global-setup.ts).
    maxWorkers: availableParallelism() + 1,
    // Vitest's order, with the files that mostly wait spread apart, each beside files that
    // compute (scripts/test-order.ts).
    sequence: { sequencer: SpreadWaitingSequencer },
    // The Node projects that start servers share each worker's modules across their test files
    // (a file still gets its own servers, databases and browser contexts, and stops them in its
    // afterAll): the server, Playwright and the build tools are imported once per worker instead
    // of once per file. The DOM workspaces share a document per worker except for the files
    // that mock modules or test an import (see modal-app's projects); `shared`, whose tests
    // check what a module graph loads, and `react` (one DOM file, which mocks) stay isolated.
    projects: [
      // The test tooling's own checks (the files' order).
      { test: { name: 'scripts', root: 'scripts', environment: 'node' } },
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
          setupFiles: FILE_CPU,
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
          setupFiles: FILE_CPU,
          root: 'wallet-frame',
          environment: 'node',
          isolate: false,
          globalSetup: ['../server/src/testing/global-setup.ts'],
          testTimeout: 30_000,
        },
      },
      // The host SDK's tests in three projects (`--project 'host-sdk*'` runs them all), split
      // as the modal's are (see there): host-sdk isolated, host-sdk-dom one document and module
      // graph per worker (its setup puts the document back after each file), host-sdk-node
      // the files that build the package or run it in Node.
      {
        test: {
          name: 'host-sdk',
          root: 'host-sdk',
          environment: 'jsdom',
          include: HOST_SDK_ISOLATED,
          // A bound, not a speed goal: these files may run first, while Vite transforms the
          // SDK's modules for the first time on a busy machine.
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'host-sdk-dom',
          root: 'host-sdk',
          environment: 'jsdom',
          isolate: false,
          // Worker threads: with a few workers for the run, a thread's start and its
          // messages cost less than a child process's (docs/performance.md).
          pool: 'threads',
          setupFiles: ['src/test/setup.ts'],
          exclude: [...HOST_SDK_ISOLATED, ...HOST_SDK_NODE, ...configDefaults.exclude],
        },
      },
      {
        test: {
          name: 'host-sdk-node',
          setupFiles: FILE_CPU,
          root: 'host-sdk',
          environment: 'node',
          isolate: false,
          include: HOST_SDK_NODE,
        },
      },
      {
        test: {
          name: 'server-sdk',
          setupFiles: FILE_CPU,
          root: 'server-sdk',
          environment: 'node',
          isolate: false,
          // The run's migrated PGlite dump, which its API on `memory://` loads (see the file).
          globalSetup: ['../server/src/testing/pglite-setup.ts'],
          testTimeout: 30_000,
        },
      },
      {
        resolve: { alias: HOST_SDK_SOURCES },
        test: { name: 'react', root: 'react', environment: 'jsdom' },
      },
      // The connector on the two majors its peer range names: wagmi 3 as installed, and wagmi 2
      // (the dev dependency `@wagmi/core-v2`, an npm alias of 2.22) for the files that run it.
      {
        resolve: { alias: HOST_SDK_SOURCES },
        test: {
          name: 'wagmi',
          root: 'wagmi',
          environment: 'node',
          isolate: false,
          env: { WAGMI_CORE_MAJOR: '3' },
        },
      },
      {
        resolve: {
          alias: [...HOST_SDK_SOURCES, { find: /^@wagmi\/core$/, replacement: '@wagmi/core-v2' }],
        },
        test: {
          name: 'wagmi-v2',
          root: 'wagmi',
          environment: 'node',
          isolate: false,
          include: ['src/connector.test.ts', 'src/discovery.test.ts'],
          env: { WAGMI_CORE_MAJOR: '2' },
        },
      },
      // The modal's tests in three projects (`--project 'modal-app*'` runs them all). A jsdom
      // environment, the setup and the modal's modules cost as much CPU per file as most files'
      // tests, so only the files that need their own module graph pay for one:
      // - modal-app: isolated, each file in a new jsdom with fresh modules: the files that mock a
      //   module (a mock would outlive the file) or test what importing or lazily loading a
      //   module does (a module another file loaded would already be there).
      // - modal-app-dom: jsdom, one document and module graph per worker; the setup unmounts,
      //   clears the timers and puts the document, storage and URL back after each file, and
      //   each test sets up the modal's state (the harness resets the store).
      // - modal-app-node: the files that need no DOM (the modal's server, SSR and build), on
      //   one module graph per worker like the server project's.
      // React DOM, the default build's renderer (modal-app/renderer.ts): no aliases. The
      // Preact build is checked by modal-app/size.test.ts and e2e/src/preact-build.spec.ts.
      {
        test: {
          ...MODAL_APP_TEST,
          name: 'modal-app',
          environment: 'jsdom',
          include: MODAL_APP_ISOLATED,
        },
      },
      {
        test: {
          ...MODAL_APP_TEST,
          name: 'modal-app-dom',
          environment: 'jsdom',
          isolate: false,
          // Worker threads: with a few workers for the run, a thread's start and its
          // messages cost less than a child process's (docs/performance.md).
          pool: 'threads',
          exclude: [...MODAL_APP_ISOLATED, ...MODAL_APP_NODE, ...configDefaults.exclude],
        },
      },
      {
        test: {
          ...MODAL_APP_TEST,
          name: 'modal-app-node',
          setupFiles: [...MODAL_APP_TEST.setupFiles, ...FILE_CPU],
          environment: 'node',
          isolate: false,
          // The run's migrated PGlite dump, which the modal server's tests' API loads.
          globalSetup: ['../server/src/testing/pglite-setup.ts'],
          include: MODAL_APP_NODE,
        },
      },
      {
        test: {
          name: 'e2e',
          setupFiles: FILE_CPU,
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
