interface ImportMetaEnv {
  readonly VITE_LATCH_APP_ID: string
  readonly VITE_LATCH_MODAL_URL: string
  /** A node for chain reads (the balance); the chain's public node when empty. */
  readonly VITE_RPC_URL?: string
  /** An ERC-20 whose approve and transfer the batch section sends in one batch; none when empty. */
  readonly VITE_TOKEN_ADDRESS?: string
}
interface ImportMeta {
  readonly env: ImportMetaEnv
}
