import type { TokenStore } from '../session/token-store.ts'

/**
 * A session hint in memory, for session tests: `value` is whether a session is marked. A
 * non-null `initial` (once a refresh token, now only a name for "signed in before") marks one.
 */
export function memoryTokens(initial: string | boolean | null = null): TokenStore & {
  value: boolean
} {
  const store = {
    value: initial !== null && initial !== false,
    present: () => store.value,
    mark: () => {
      store.value = true
    },
    clear: () => {
      store.value = false
    },
    kind: () => 'memory' as const,
  }
  return store
}
