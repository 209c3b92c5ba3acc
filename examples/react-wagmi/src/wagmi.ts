import { latch } from '@latch/wagmi'
import { createConfig, http } from 'wagmi'
import { mainnet } from 'wagmi/chains'

export const APP_ID = import.meta.env.VITE_LATCH_APP_ID
export const MODAL_URL = import.meta.env.VITE_LATCH_MODAL_URL

// The connector and <LatchProvider> name the same app and modal, so they share one client:
// one modal frame, one session.
export const config = createConfig({
  chains: [mainnet],
  connectors: [latch({ appId: APP_ID, modalUrl: MODAL_URL })],
  transports: { [mainnet.id]: http(import.meta.env.VITE_RPC_URL || undefined) },
})
