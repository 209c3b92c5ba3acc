/** Builds @latch/wagmi for npm: `tsx wagmi/build.ts` (react/build-library.ts says what it makes). */
import { buildLibrary } from '../react/build-library.ts'

export const WAGMI_EXTERNAL = ['@wagmi/core', 'viem']

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await buildLibrary({ name: 'wagmi', external: WAGMI_EXTERNAL }))
}
