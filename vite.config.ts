import { defineConfig } from 'vitest/config'
import { PREACT_ALIASES, REACT_IMPORTING_DEPENDENCIES } from './modal-app/renderer.ts'

/** One configuration: a Vitest project per workspace. */
export default defineConfig({
  test: {
    // One worker per core (Vitest's default leaves one core to itself: on CI's 2 cores that is
    // one worker, and the unit projects ran one file at a time, 366 s instead of 237 s). The e2e
    // project keeps one file at a time (fileParallelism: false); it runs after the others.
    maxWorkers: '100%',
    projects: [
      { test: { name: 'shared', root: 'shared', environment: 'node' } },
      {
        test: {
          name: 'server',
          root: 'server',
          environment: 'node',
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      { test: { name: 'wallet-frame', root: 'wallet-frame', environment: 'node' } },
      { test: { name: 'host-sdk', root: 'host-sdk', environment: 'jsdom' } },
      {
        // The modal's renderer is Preact (modal-app/renderer.ts): the tests run what ships.
        // 'module' first: the testing library's ES build imports React where the aliases
        // apply; its CommonJS build would require() React itself.
        resolve: { alias: PREACT_ALIASES, mainFields: ['module', 'main'] },
        test: {
          name: 'modal-app',
          root: 'modal-app',
          environment: 'jsdom',
          server: { deps: { inline: REACT_IMPORTING_DEPENDENCIES } },
        },
      },
      {
        test: {
          name: 'e2e',
          root: 'e2e',
          environment: 'node',
          include: ['src/**/*.spec.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
})
