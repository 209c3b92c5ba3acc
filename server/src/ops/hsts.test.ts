/**
 * Strict-Transport-Security from `latch serve`: on both origins in production over https, on
 * every kind of answer; never outside production or on a plain-http (loopback) origin.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { migratedMemory } from '../testing/global-setup.ts'
import { TEST_SECRET } from '../testing/test-server.ts'
import { STRICT_TRANSPORT_SECURITY, strictTransportSecurity } from './hsts.ts'
import { serveLatch } from './serve.ts'

let dir = ''
/** Stand-ins for the build: the servers only read and serve these files. */
let assets: Record<string, string> = {}
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'latch-hsts-'))
  const [modal, sdk, frame] = ['modal', 'sdk', 'frame'].map((d) => join(dir, d)) as [
    string,
    string,
    string,
  ]
  for (const d of [modal, sdk, frame]) mkdirSync(d)
  writeFileSync(join(modal, 'index.html'), '<!doctype html><html><head></head><body></body></html>')
  for (const f of ['sdk.js', 'latch.js', 'wallet-bridge.js', 'provider.js']) {
    writeFileSync(join(sdk, f), `/* ${f} */`)
  }
  for (const f of ['index.html', 'export.html']) writeFileSync(join(frame, f), '<!doctype html>')
  assets = { LATCH_MODAL_DIR: modal, LATCH_SDK_DIR: sdk, LATCH_WALLET_FRAME_DIR: frame }
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The header on an API 404, an API refusal, the API's probe-free route, and the modal's files. */
async function headersSeen(env: Record<string, string>): Promise<(string | null)[]> {
  const latch = await serveLatch({
    ...migratedMemory(),
    env: {
      ...assets,
      DATABASE_URL: 'memory://',
      LATCH_SECRET: TEST_SECRET,
      LATCH_API_PORT: '0',
      LATCH_MODAL_PORT: '0',
      ...env,
    },
    migrate: true,
    log: () => {},
  })
  try {
    const api = latch.api?.url ?? ''
    const modal = latch.modal?.url ?? ''
    const answers = await Promise.all([
      fetch(`${api}/no-such-route`),
      fetch(`${api}/api/v1/users/me`),
      fetch(`${modal}/sdk.js`),
      fetch(`${modal}/no-such-file.js`),
    ])
    expect(answers.map((a) => a.status)).toEqual([404, 400, 200, 404])
    return answers.map((a) => a.headers.get('strict-transport-security'))
  } finally {
    await latch.close()
  }
}

const PRODUCTION = {
  NODE_ENV: 'production',
  SMTP_URL: 'smtp://127.0.0.1:1',
  LATCH_PUBLIC_URL: 'https://api.example.com',
  LATCH_MODAL_ORIGIN: 'https://auth.example.com',
}

test('security: in production over https both origins send Strict-Transport-Security on every answer', async () => {
  expect(await headersSeen(PRODUCTION)).toEqual(Array(4).fill(STRICT_TRANSPORT_SECURITY))
  expect(STRICT_TRANSPORT_SECURITY).toBe('max-age=31536000')
}, 120_000)

test('behavior: outside production, or on a loopback http origin, no Strict-Transport-Security', async () => {
  expect(await headersSeen({})).toEqual(Array(4).fill(null))
  // Production allows http: on loopback (a trial run); pinning localhost would outlive it.
  expect(strictTransportSecurity(true, 'http://localhost:8787')).toBeNull()
  expect(strictTransportSecurity(true, 'http://127.0.0.1:8788')).toBeNull()
  expect(strictTransportSecurity(true, null)).toBeNull()
  expect(strictTransportSecurity(false, 'https://api.example.com')).toBeNull()
}, 120_000)
