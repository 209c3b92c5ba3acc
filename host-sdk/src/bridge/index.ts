/**
 * The wallet bridge's entry: dist/wallet-bridge.js, an ES module the host SDK imports from the
 * modal origin the first time the modal asks for wallets (host-methods.ts).
 */
export { type BridgeOptions, createBridge, type WalletBridge } from './bridge.ts'
