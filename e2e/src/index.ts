export { buildFrontendOnce } from './build.ts'
export {
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  closeAllContexts,
  closeWorkerBrowsers,
  type Harness,
  type HostPage,
  launchChromium,
  startHarness,
  withTimeout,
  workerChromium,
} from './harness.ts'
export { type HostServer, INLINE_PARENT_ID, startHostServer } from './host-server.ts'
export {
  type InjectedWallet,
  type InjectedWalletOptions,
  injectWallet,
  signedText,
  TEST_WALLET_KEY,
  type WalletAccount,
  type WalletBehaviour,
  type WalletRequest,
} from './injected-wallet.ts'
export {
  SAME_SITE_CHROMIUM_ARGS,
  SAME_SITE_DOMAIN,
  type SameSiteProxy,
  startSameSiteProxy,
  testCertificate,
} from './same-site.ts'
