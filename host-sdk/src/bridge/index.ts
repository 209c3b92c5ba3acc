/**
 * The wallet bridge's entry: dist/wallet-bridge.js, an ES module the host SDK imports from the
 * modal origin the first time the modal asks for wallets (create-latch.ts).
 */
import type { createBridge } from './bridge.ts'

export { type BridgeOptions, createBridge, type WalletBridge } from './bridge.ts'
export type BridgeModule = { createBridge: typeof createBridge }
