/**
 * @latch/node: Latch on the host's backend. Middleware: `@latch/node/hono` and
 * `@latch/node/express` (`requireUser()`).
 */
export * from './admin.ts'
export {
  type AccessTokenClaims,
  createTokenVerifier,
  LatchAuthError,
  type LatchAuthErrorCode,
  type VerifyOptions,
  verifyAccessToken,
} from './verify.ts'
export * from './webhooks.ts'
