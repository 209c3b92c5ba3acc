/** Sets the modal up as the startup does, against the API double, with a recording host. */
import type { HostAppConfig, HostMethods, ServerAppConfig } from '@latch/shared'
import { createApiClient } from '@latch/shared'
import { act, render } from '@testing-library/react'
import { vi } from 'vitest'
import { App } from '../App.tsx'
import { initialize } from '../flow/flow.ts'
import { setRuntime } from '../runtime.ts'
import { setUser } from '../session/account.ts'
import { createSession, type Session } from '../session/session.ts'
import { resetStore } from '../store.ts'
import type { ApiDouble } from './api-double.ts'
import { APP_ID, serverConfig } from './fixtures.ts'
import { memoryTokens } from './memory-tokens.ts'

export interface HostCall {
  method: keyof HostMethods
  args: unknown[]
}

export interface Harness {
  hostCalls: HostCall[]
  session: Session
  tokens: ReturnType<typeof memoryTokens>
  /** Host calls of one method, e.g. emitted('login'). */
  emitted(event: string): unknown[]
}

/** A host that records every call; built as a proxy so new HostMethods need no change here. */
export function recordingHost(calls: HostCall[]): HostMethods {
  const answers: Record<string, unknown> = {
    wallets: [],
    pageUrl: 'http://localhost:5173/',
  }
  return new Proxy({} as HostMethods, {
    get(_target, name) {
      if (typeof name !== 'string' || name === 'then') return undefined
      const method = name as keyof HostMethods
      return async (...args: unknown[]) => {
        calls.push({ method, args })
        return answers[method]
      }
    },
  })
}

export function setupRuntime(api: ApiDouble, refreshToken: string | null = null): Harness {
  resetStore()
  const hostCalls: HostCall[] = []
  const tokens = memoryTokens(refreshToken)
  let session: Session | null = null
  const client = createApiClient({
    baseUrl: api.url,
    appId: APP_ID,
    accessToken: () => session?.getAccessToken() ?? Promise.resolve(null),
  })
  session = createSession({ api: client, tokens, onUser: setUser })
  setRuntime({
    appId: APP_ID,
    apiUrl: api.url,
    api: client,
    session,
    host: recordingHost(hostCalls),
  })
  return {
    hostCalls,
    session,
    tokens,
    emitted: (event) =>
      hostCalls.filter((c) => c.method === 'emit' && c.args[0] === event).map((c) => c.args[1]),
  }
}

/** Runtime, configuration and the rendered App. */
/**
 * Whether the modal's frame holds the page's focus, as it does once the host showed and
 * focused it (jsdom's document has focus only after an element inside was focused). The modal
 * moves focus to a screen only while its frame holds it (focus.ts, focusFirst).
 */
export function frameFocused(focused = true): void {
  vi.spyOn(document, 'hasFocus').mockReturnValue(focused)
}

export function renderModal(
  api: ApiDouble,
  server: Partial<ServerAppConfig> = {},
  host: HostAppConfig = {},
): Harness {
  const harness = setupRuntime(api)
  act(() => initialize(serverConfig(server), host))
  render(<App />)
  return harness
}
