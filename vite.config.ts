import { defineConfig } from 'vitest/config'
import { PREACT_ALIASES, REACT_IMPORTING_DEPENDENCIES } from './modal-app/renderer.ts'

/** One configuration: a Vitest project per workspace. */
export default defineConfig({
  test: {
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
