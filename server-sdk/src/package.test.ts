/**
 * @latch/node as a backend developer's `npm install` gets it: freshly built, packed by `npm pack`,
 * unpacked into a project of its own with its dependency (jose) and the optional peer (hono)
 * beside it. The project's plain Node runs every entry, and its TypeScript (strict, NodeNext,
 * `skipLibCheck: false`, no zod or libphonenumber installed) checks a consumer against the
 * shipped declarations. A file missing from `files`, an `exports` entry naming nothing built, a
 * declaration importing a package the consumer does not have, or an entry that only runs under
 * tsx fails here.
 */
import { execFile } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { buildLibrary } from '../../scripts/build-library.ts'
import { NODE_ENTRIES, NODE_EXTERNAL } from '../build.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const run = promisify(execFile)
let project = ''

beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), 'latch-node-pack-'))
  await buildLibrary({
    name: 'server-sdk',
    external: NODE_EXTERNAL,
    entries: NODE_ENTRIES,
    types: ['node'],
  })
  const { stdout } = await run(
    'npm',
    ['pack', '-w', '@latch/node', '--json', '--pack-destination', project],
    { cwd: ROOT, timeout: 60_000 },
  )
  const [packed] = JSON.parse(stdout) as { name: string; filename: string }[]
  if (!packed) throw new Error(`npm pack packed nothing: ${stdout}`)
  const into = join(project, 'node_modules/@latch/node')
  await mkdir(into, { recursive: true })
  await run('tar', ['-xzf', join(project, packed.filename), '-C', into, '--strip-components=1'])
  // What npm would install beside it: the dependency, the optional peer, Node's types.
  await mkdir(join(project, 'node_modules/@types'), { recursive: true })
  for (const dep of ['jose', 'hono', '@types/node']) {
    await symlink(join(ROOT, 'node_modules', dep), join(project, 'node_modules', dep), 'dir')
  }
  await writeFile(join(project, 'package.json'), JSON.stringify({ type: 'module', private: true }))
}, 120_000)

afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true })
})

test('behavior: the packed package ships only its build and README, and every entry runs under plain Node', async () => {
  const { stdout: listing } = await run('tar', ['-tzf', join(project, 'latch-node-0.1.0.tgz')])
  const files = listing.trim().split('\n').sort()
  expect(files.filter((f) => !f.startsWith('package/dist/'))).toEqual([
    'package/README.md',
    'package/package.json',
  ])
  expect(files).toEqual(
    expect.arrayContaining([
      'package/dist/index.js',
      'package/dist/index.d.ts',
      'package/dist/hono.js',
      'package/dist/express.js',
    ]),
  )
  expect(files.some((f) => f.includes('.test.'))).toBe(false)

  const secret = `whsec_${Buffer.from('a webhook secret of the host').toString('base64')}`
  const body = '{"type":"user.created","timestamp":"2026-11-27T00:00:00.000Z","data":{}}'
  const now = Math.floor(Date.now() / 1000)
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
  const signature = createHmac('sha256', key).update(`msg_1.${now}.${body}`).digest('base64')
  await writeFile(
    join(project, 'consumer.mjs'),
    `import * as node from '@latch/node'
import * as hono from '@latch/node/hono'
import * as express from '@latch/node/express'
const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': '${now}', 'webhook-signature': 'v1,${signature}' }
const event = node.verifyWebhook(headers, ${JSON.stringify(body)}, '${secret}')
let forged = ''
try { node.verifyWebhook(headers, ${JSON.stringify(body.replace('created', 'deleted'))}, '${secret}') }
catch (e) { forged = e.name }
let token = ''
try { await node.verifyAccessToken('not.a.token', { appId: 'a'.repeat(25), apiUrl: 'http://127.0.0.1:9' }) }
catch (e) { token = e.code }
console.log(JSON.stringify({
  node: Object.keys(node).sort(), hono: Object.keys(hono), express: Object.keys(express),
  event: [event.id, event.type], forged, token,
}))
`,
  )
  const { stdout } = await run(process.execPath, ['consumer.mjs'], {
    cwd: project,
    timeout: 30_000,
  })
  const out = JSON.parse(stdout) as Record<string, unknown>
  expect(out).toEqual({
    node: [
      'LatchApiError',
      'LatchAuthError',
      'WEBHOOK_TOLERANCE_S',
      'WebhookVerificationError',
      'createLatchAdmin',
      'createTokenVerifier',
      'verifyAccessToken',
      'verifyWebhook',
    ],
    hono: ['requireUser'],
    express: ['requireUser'],
    event: ['msg_1', 'user.created'],
    forged: 'WebhookVerificationError',
    token: 'invalid_token',
  })
}, 60_000)

test('behavior: a strict TypeScript consumer type-checks against the shipped declarations alone', async () => {
  await writeFile(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
      },
      files: ['consumer.ts'],
    }),
  )
  await writeFile(
    join(project, 'consumer.ts'),
    `import { type AccessTokenClaims, createLatchAdmin, type User, verifyAccessToken } from '@latch/node'
import { requireUser as honoUser, type LatchUserEnv } from '@latch/node/hono'
import { requireUser as expressUser } from '@latch/node/express'
import type { MiddlewareHandler } from 'hono'

export async function who(token: string): Promise<string> {
  const claims: AccessTokenClaims = await verifyAccessToken(token, { appId: 'x', apiUrl: 'https://api.example.com' })
  return claims.sub
}
export async function lookUp(email: string): Promise<User | null> {
  const latch = createLatchAdmin({ appId: 'x', secret: 'lsk_x', apiUrl: 'https://api.example.com' })
  return latch.getUserByEmail(email)
}
export const middleware: MiddlewareHandler<LatchUserEnv> = honoUser({ appId: 'x', apiUrl: 'https://api.example.com' })
export const expressMiddleware = expressUser({ appId: 'x', apiUrl: 'https://api.example.com' })
// @ts-expect-error the claims have no such member: the declarations are real, not any
export const wrong = (c: AccessTokenClaims): string => c.nonexistent
`,
  )
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc')
  const result = await run(process.execPath, [tsc, '-p', project], {
    cwd: project,
    timeout: 120_000,
  })
    .then(() => '')
    .catch((e: { stdout?: string }) => e.stdout ?? String(e))
  expect(result).toBe('')
}, 150_000)
