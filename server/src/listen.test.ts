import type { AddressInfo } from 'node:net'
import { expect, test } from 'vitest'
import { sendRaw } from './fuzz/wire.ts'
import { listen } from './listen.ts'

test('error: a failure outside the app answers 500 with the error body and is logged; a bad path is a 400, not logged', async () => {
  const logs: string[] = []
  const server = await listen(
    (request) => {
      if (new URL(request.url).pathname === '/throws') throw new Error('thrown outside the app')
      return Promise.reject(new Error('rejected outside the app'))
    },
    0,
    '127.0.0.1',
    (line) => logs.push(line),
  )
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    for (const path of ['/throws', '/rejects']) {
      const res = await fetch(`${base}${path}`)
      expect(res.status).toBe(500)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('internal_error')
    }
    expect(
      logs.filter((l) => l.includes('outside the app: Error: thrown outside the app')),
    ).toHaveLength(1)
    expect(
      logs.filter((l) => l.includes('outside the app: Error: rejected outside the app')),
    ).toHaveLength(1)
    // The adapter refuses a backslash before the app sees it: the client's fault.
    const raw = await sendRaw(new URL(base), Buffer.from('GET /a\\b HTTP/1.1\r\nHost: x\r\n\r\n'))
    expect(raw.status).toBe(400)
    expect(raw.text).toContain('Malformed HTTP request: Backslash in request path')
    expect(logs).toHaveLength(2)
  } finally {
    await new Promise((resolve) => server.close(resolve))
  }
})
