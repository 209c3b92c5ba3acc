import { defineConfig } from 'vitest/config'

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
      { test: { name: 'modal-app', root: 'modal-app', environment: 'jsdom' } },
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
