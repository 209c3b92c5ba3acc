/**
 * @latch/node: Latch on the host's backend. Middleware: `@latch/node/hono` and
 * `@latch/node/express` (`requireUser()`).
 */
export * from './admin.ts'
export * from './verify.ts'
export * from './webhooks.ts'
