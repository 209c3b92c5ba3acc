import type { TokenStore } from '../token-store.ts'

/** A token store in memory, for session tests. */
export function memoryTokens(initial: string | null = null): TokenStore & { value: string | null } {
  const store = {
    value: initial,
    get: () => store.value,
    set: (token: string) => {
      store.value = token
    },
    clear: () => {
      store.value = null
    },
    kind: () => 'memory' as const,
  }
  return store
}
