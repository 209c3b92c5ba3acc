/**
 * A stand-in for the host SDK's client in the hooks' unit tests: events the test emits, calls it
 * answers, and a count of live listeners so a test can tell that unmounting removed them. The
 * real client needs the modal's origin in a browser; e2e/src/examples.spec.ts runs the hooks
 * against it.
 */
import type { LatchClient, LatchEventName, User } from '@latch/shared'
import { vi } from 'vitest'

type Handler = (payload: unknown) => void

export interface FakeClient extends LatchClient {
  emit(event: LatchEventName, payload: unknown): void
  listenerCount(): number
  resolveReady(): void
  rejectReady(error: Error): void
  destroyed: boolean
}

export function fakeClient(initialUser: User | null = null): FakeClient {
  const handlers = new Map<string, Set<Handler>>()
  let resolveReady = () => {}
  let rejectReady: (e: Error) => void = () => {}
  const ready = new Promise<void>((resolve, reject) => {
    resolveReady = resolve
    rejectReady = reject
  })
  ready.catch(() => {})
  const pending = () => new Promise<never>(() => {})
  const client: FakeClient = {
    ready,
    destroyed: false,
    resolveReady: () => resolveReady(),
    rejectReady: (e) => rejectReady(e),
    on(event, handler) {
      handlers.set(event, (handlers.get(event) ?? new Set()).add(handler as Handler))
    },
    off(event, handler) {
      handlers.get(event)?.delete(handler as Handler)
    },
    emit(event, payload) {
      for (const handler of [...(handlers.get(event) ?? [])]) handler(payload)
    },
    listenerCount: () => [...handlers.values()].reduce((n, set) => n + set.size, 0),
    getUser: vi.fn(async () => initialUser),
    login: vi.fn(pending),
    logout: vi.fn(async () => {}),
    link: vi.fn(pending),
    unlink: vi.fn(pending),
    getAccessToken: vi.fn(async () => 'token'),
    createWallet: vi.fn(pending),
    recoverWallet: vi.fn(pending),
    signMessage: vi.fn(pending),
    sendTransaction: vi.fn(pending),
    sendCalls: vi.fn(pending),
    exportWallet: vi.fn(pending),
    connectWallet: vi.fn(pending),
    forkSession: vi.fn(pending),
    getEthereumProvider: vi.fn(pending),
    destroy() {
      client.destroyed = true
    },
  }
  return client
}

export const someUser = (id: string, wallet?: `0x${string}`): User => ({
  id,
  createdAt: '2026-01-01T00:00:00.000Z',
  linkedAccounts: [
    {
      type: 'email',
      address: `${id}@example.com`,
      verifiedAt: '2026-01-01T00:00:00.000Z',
    },
    ...(wallet
      ? [
          {
            type: 'wallet' as const,
            address: wallet,
            chainType: 'ethereum' as const,
            chainId: 'eip155:1',
            walletClient: 'latch' as const,
            walletClientType: 'latch',
            connectorType: 'embedded',
            recoveryMethod: 'latch' as const,
            verifiedAt: '2026-01-01T00:00:00.000Z',
          },
        ]
      : []),
  ],
})
