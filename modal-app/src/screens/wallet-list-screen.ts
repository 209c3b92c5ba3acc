import { store } from '../store.ts'
import type { ScreenId } from './ids.ts'

/**
 * The screen listing the wallets of the flow on screen: where a wallet screen's back arrow and
 * 'Done! I have my wallet' return. Connect-only has its own lists (a signed-in user's says so).
 */
export function walletListScreen(): ScreenId {
  const { flow, user } = store.getState()
  if (flow?.kind === 'link') return 'LINK_WALLET_SCREEN'
  if (flow?.kind === 'connect-wallet') {
    return user ? 'CONNECT_ONLY_AUTHENTICATED_SCREEN' : 'CONNECT_ONLY_LANDING_SCREEN'
  }
  return 'LANDING'
}
