/** Builds @latch/react for npm: `tsx react/build.ts` (scripts/build-library.ts says what it makes). */
import { buildLibrary } from '../scripts/build-library.ts'

export const REACT_EXTERNAL = ['react', 'react-dom']

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await buildLibrary({ name: 'react', external: REACT_EXTERNAL }))
}
