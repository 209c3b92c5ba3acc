import { latch } from '@latch/wagmi'
import { createConfig, http } from 'wagmi'
import { mainnet } from 'wagmi/chains'

export const APP_ID = import.meta.env.VITE_LATCH_APP_ID
export const MODAL_URL = import.meta.env.VITE_LATCH_MODAL_URL
/** The ERC-20 the batch section approves and transfers, when set (the app's sponsor pays for it). */
export const TOKEN = /^0x[0-9a-fA-F]{40}$/.test(import.meta.env.VITE_TOKEN_ADDRESS ?? '')
  ? (import.meta.env.VITE_TOKEN_ADDRESS as `0x${string}`)
  : null

// The connector and <LatchProvider> name the same app and modal, so they share one client:
// one modal frame, one session.
export const config = createConfig({
  chains: [mainnet],
  connectors: [latch({ appId: APP_ID, modalUrl: MODAL_URL })],
  transports: { [mainnet.id]: http(import.meta.env.VITE_RPC_URL || undefined) },
})
