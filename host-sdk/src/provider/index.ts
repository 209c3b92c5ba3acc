/**
 * The EIP-1193 provider's entry: dist/provider.js, an ES module the host SDK imports from the
 * modal origin on the first getEthereumProvider() (create-latch.ts). The default export keeps
 * the SDK's side of the call short (sdk.js has a 6 KB budget).
 */
import { providerFor } from './provider.ts'

export default providerFor
export { createProvider } from './provider.ts'
export type ProviderModule = { default: typeof providerFor }
