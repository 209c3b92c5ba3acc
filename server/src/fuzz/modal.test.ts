/**
 * Bad input at scale for the modal origin (modal-app/server.ts): generated methods, paths
 * (traversal in every spelling, bad escapes, NULs), `?app=` values and headers against a real
 * modal server in front of a real API. Every answer is a 2xx for the page, the SDK and the
 * built files, a 4xx otherwise; never a 5xx, never a dropped connection, never a file from
 * outside the build folder, and never a page another site may frame unless its app says so.
 *
 * LATCH_FUZZ_SEED and LATCH_FUZZ_RUNS replay or widen a run (shared with fuzz.test.ts).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type ModalServer, startModalServer } from '../../../modal-app/server.ts'
import { type RunningServer, startServer } from '../index.ts'
import { migratedMemory } from '../testing/global-setup.ts'
import { TEST_SECRET } from '../testing/test-server.ts'
import { send, sendRaw, type WireOutcome, type WireRequest } from '../testing/wire.ts'

const SEED = Number(process.env.LATCH_FUZZ_SEED ?? 20_261_123)
const RUNS = Math.ceil(Number(process.env.LATCH_FUZZ_RUNS ?? 2_200) / 3)
const SECRET_TEXT = 'modal-fuzz-secret-file-content'
const ORIGIN = 'https://shop.example.com'

let dir: string
let api: RunningServer
let modal: ModalServer
let appId = ''
const logs: string[] = []

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'latch-modal-fuzz-'))
  await mkdir(join(dir, 'dist/assets'), { recursive: true })
  await mkdir(join(dir, 'sdk'))
  await writeFile(
    join(dir, 'dist/index.html'),
    '<!doctype html><html><head><meta name="latch-api-url" content="" /></head><body></body></html>',
  )
  await writeFile(join(dir, 'dist/assets/index-abc.js'), 'console.log(1)')
  await writeFile(join(dir, 'dist/assets/index-abc.css'), 'body{}')
  await writeFile(join(dir, 'dist/assets/page.html'), '<p>not a page to serve</p>')
  await writeFile(join(dir, 'sdk/sdk.js'), '/* sdk */')
  await writeFile(join(dir, 'sdk/latch.js'), 'export {}')
  // Beside the build folder, as a data file would be: never to be served.
  await writeFile(join(dir, 'secret.txt'), SECRET_TEXT)
  await writeFile(join(dir, 'dist-secret.txt'), SECRET_TEXT)
  api = await startServer({
    ...migratedMemory(),
    port: 0,
    env: { DATABASE_URL: 'memory://', LATCH_SECRET: TEST_SECRET, SMTP_URL: '' },
    log: () => {},
  })
  appId = (await api.admin.createApp({ name: 'Framed', allowedOrigins: [ORIGIN] })).id
  modal = await startModalServer({
    apiUrl: api.url,
    distDir: join(dir, 'dist'),
    sdkDir: join(dir, 'sdk'),
    log: (line) => logs.push(line),
  })
}, 60_000)

afterAll(async () => {
  await modal?.close()
  await api?.close()
  await rm(dir, { recursive: true, force: true })
})

const pathChar = fc.integer({ min: 0x21, max: 0x7e }).map((n) => String.fromCharCode(n))
const junk = fc.string({ unit: pathChar, maxLength: 40 })
const headerChar = fc
  .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }))
  .map((n) => String.fromCharCode(n))

/** The paths the modal origin serves, and ways out of its folder. */
const SERVED = [
  '/',
  '/index.html',
  '/sdk.js',
  '/latch.js',
  '/assets/index-abc.js',
  '/assets/index-abc.css',
]
const ESCAPES = [
  '/../secret.txt',
  '/assets/../../secret.txt',
  '/%2e%2e/secret.txt',
  '/%2e%2e%2fsecret.txt',
  '/..%2fsecret.txt',
  '/assets/%2e%2e/%2e%2e/secret.txt',
  '/%2E%2E/%2E%2E/etc/passwd',
  '/..%5csecret.txt',
  '/.%2e/dist-secret.txt',
  '/assets/page.html',
  '/%2e/index.html',
  '/assets/%00',
  '/index.html%00.js',
  '/%ZZ',
  '/%',
  '/%C3%28',
  '//secret.txt',
  '/assets',
  '/assets/',
  '/sdk.js/',
  '/node_modules/.bin/tsx',
]

const appQuery = fc.oneof(
  fc.constant(''),
  fc.constant('').map(() => `?app=${appId}`),
  fc.constant('').map(() => `?app=${appId}&app=other`),
  fc.stringMatching(/^[a-z0-9]{25}$/).map((id) => `?app=${id}`),
  junk.map((j) => `?app=${encodeURIComponent(j)}`),
  fc.constant(`?app=${'a'.repeat(8_000)}`),
  fc.constant('?app=%ZZ'),
  fc.constant('?app=..%2F..%2Fapi%2Fv1%2Fapps'),
)

const cases: fc.Arbitrary<WireRequest> = fc
  .record({
    method: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom('GET', 'HEAD') },
      fc.constantFrom('POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'PROPFIND', 'TRACE'),
    ),
    path: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...SERVED) },
      { weight: 3, arbitrary: fc.constantFrom(...ESCAPES) },
      junk.map((j) => `/${j}`),
      junk.map((j) => `/assets/${j}`),
    ),
    query: appQuery,
    headers: fc.dictionary(
      fc.constantFrom(
        'range',
        'if-none-match',
        'accept-encoding',
        'cookie',
        'origin',
        'x-junk',
        'referer',
      ),
      fc.string({ unit: headerChar, maxLength: 200 }),
      { maxKeys: 3 },
    ),
    body: fc.option(fc.uint8Array({ maxLength: 2_000 }), { freq: 4 }),
  })
  .map(({ method, path, query, headers, body }) => {
    const req: WireRequest = { method, path: `${path}${query}`, headers }
    if (body !== null) req.body = Buffer.from(body)
    return req
  })

function frameAncestors(csp: string | string[] | undefined): string | undefined {
  return String(csp ?? '')
    .split(';')
    .map((d) => d.trim())
    .find((d) => d.startsWith('frame-ancestors '))
}

/** Why an answer of the modal origin breaks its contract, or null. */
function violation(req: WireRequest, outcome: WireOutcome): string | null {
  if (outcome.kind === 'dropped') return `connection dropped: ${outcome.error}`
  const { status, headers, body } = outcome.answer
  if (status >= 500) return `answered ${status}: ${body.toString('utf8').slice(0, 200)}`
  if (body.toString('latin1').includes(SECRET_TEXT)) return 'served a file from outside the build'
  const get = req.method === 'GET' || req.method === 'HEAD'
  if (!get && status !== 405 && status !== 400) return `${req.method} answered ${status}`
  if (status >= 200 && status < 300) {
    // What the server resolves the target to (dot segments, %2e included, fall away).
    let path = ''
    try {
      path = decodeURIComponent(new URL(req.path, 'http://x').pathname)
    } catch {
      return `served the undecodable ${req.path} (${status})`
    }
    if (!SERVED.includes(path)) return `served ${path} (${status})`
    if (path === '/' || path === '/index.html') {
      const known = new URL(req.path, 'http://x').searchParams.get('app') === appId
      const expected = known ? `frame-ancestors ${ORIGIN}` : "frame-ancestors 'none'"
      const actual = frameAncestors(headers['content-security-policy'])
      if (actual !== expected) return `page framed by ${actual}, expected ${expected}`
    }
    return null
  }
  if (status < 400) return `answered ${status}`
  return null
}

test(`fuzz: ${RUNS} generated requests to the modal origin never answer 5xx, drop the connection or leave its folder (seed ${SEED})`, async () => {
  console.log(`[fuzz modal] seed ${SEED}, ${RUNS} runs`)
  const base = new URL(modal.url)
  const byStatus = new Map<number, number>()
  const failures: string[] = []
  const result = await fc.check(
    fc.asyncProperty(cases, async (req) => {
      const outcome = await send(base, req)
      if (outcome.kind === 'answer') {
        byStatus.set(outcome.answer.status, (byStatus.get(outcome.answer.status) ?? 0) + 1)
      }
      const why = violation(req, outcome)
      if (why !== null) {
        failures.push(`${req.method} ${req.path.slice(0, 160)}: ${why}`)
        throw new Error(failures.at(-1))
      }
    }),
    { seed: SEED, numRuns: RUNS, endOnFailure: true },
  )
  if (result.failed) {
    throw new Error(`modal fuzz failed at run ${result.numRuns} (seed ${SEED}): ${failures[0]}`)
  }
  const statuses = [...byStatus].sort(([x], [y]) => x - y)
  console.log(`[fuzz modal] by status ${statuses.map(([s, n]) => `${s}: ${n}`).join(', ')}`)
  expect(logs.filter((l) => l.includes(' failed: '))).toEqual([])
  // Raw framing errors end in a 4xx from node's parser, and the server still serves its page.
  for (const raw of ['GARBAGE\r\n\r\n', `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`]) {
    const answer = await sendRaw(base, Buffer.from(raw))
    expect(answer.status).toBeGreaterThanOrEqual(400)
    expect(answer.status).toBeLessThan(500)
  }
  expect((await fetch(`${modal.url}/?app=${appId}`)).status).toBe(200)
}, 120_000)
