/** Builds @latch/wagmi for npm: `tsx wagmi/build.ts` (scripts/build-library.ts says what it makes). */
import { buildLibrary } from '../scripts/build-library.ts'

export const WAGMI_EXTERNAL = ['@wagmi/core', 'viem']

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await buildLibrary({ name: 'wagmi', external: WAGMI_EXTERNAL }))
}
