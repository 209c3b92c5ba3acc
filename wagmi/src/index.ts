/** @latch/wagmi: a wagmi 2 connector for Latch's in-app wallet. */
export { type LatchParameters, latch } from './connector.ts'
