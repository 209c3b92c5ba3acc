export { buildFrontendOnce } from './build.ts'
export {
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  type Harness,
  type HostPage,
  launchChromium,
  startHarness,
  withTimeout,
} from './harness.ts'
export { type HostServer, INLINE_PARENT_ID, startHostServer } from './host-server.ts'
