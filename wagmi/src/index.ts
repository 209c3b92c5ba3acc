/** @latch/wagmi: a wagmi connector (wagmi 2 and 3) for Latch's in-app wallet. */
export { type LatchParameters, latch } from './connector.ts'
