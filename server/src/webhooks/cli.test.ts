/** `latch apps webhook ...` through the command line, against a real receiver on 127.0.0.1. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { openServices } from '../index.ts'
import { latchCli } from '../testing/cli.ts'
import { type RunningPostgres, runPostgres } from '../testing/index.ts'
import { TEST_SECRET } from '../testing/test-server.ts'
import { startReceiver } from '../testing/webhook-receiver.ts'
import { enqueueEvent } from './events.ts'
import { createWebhookWorker } from './worker.ts'

let pg: RunningPostgres | null = null
let env: Record<string, string> = {}
let dir = ''

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'latch-webhook-cli-'))
  pg = await runPostgres()
  env = pg
    ? { DATABASE_URL: await pg.createDatabase(), LATCH_SECRET: TEST_SECRET }
    : { LATCH_DATA_DIR: dir, LATCH_SECRET: TEST_SECRET }
}, 60_000)
afterAll(async () => {
  await pg?.close()
  rmSync(dir, { recursive: true, force: true })
})

const cli = (...argv: string[]) => latchCli(env, ...argv)

test('behavior: add shows the secret once; list, deliveries, replay and remove; refusals name what is wrong', async () => {
  const hook = await startReceiver()
  try {
    const app = JSON.parse(
      (
        await cli(
          'apps',
          'create',
          '--name',
          'Hooks',
          '--origin',
          'http://localhost:5173',
          '--json',
        )
      ).out,
    ) as { id: string }
    const added = await cli(
      'apps',
      'webhook',
      'add',
      app.id,
      '--url',
      hook.url,
      '--events',
      'user.deleted,user.created',
    )
    expect(added.code).toBe(0)
    const secret = /^(whsec_\S+)$/m.exec(added.out)?.[1]
    expect(secret).toBeDefined()
    expect(added.out).toContain('events: user.created, user.deleted')
    const endpointId = /endpoint (ep_[a-z0-9]+)/.exec(added.out)?.[1] ?? ''

    const listed = await cli('apps', 'webhook', 'list', app.id, '--json')
    expect(JSON.parse(listed.out)).toEqual([
      expect.objectContaining({
        id: endpointId,
        url: hook.url,
        events: ['user.created', 'user.deleted'],
      }),
    ])
    // The secret is shown once: never again.
    expect(listed.out).not.toContain('whsec_')
    expect((await cli('apps', 'webhook', 'list', app.id)).out).not.toContain('whsec_')

    // An event, delivered by a worker (as a serving process would), then replayed.
    const services = await openServices({ env, log: () => {} })
    try {
      const eventId = await enqueueEvent(services.deps.db, {
        appId: app.id,
        type: 'user.deleted',
        data: { id: 'did:latch:gone' },
        now: new Date(),
      })
      await createWebhookWorker(services.deps).runOnce()
      await hook.waitFor(1)
      const log = await cli('apps', 'webhook', 'deliveries', app.id, '--json')
      const [delivery] = JSON.parse(log.out) as { id: string; status: string; event_id: string }[]
      expect(delivery).toMatchObject({ status: 'delivered', event_id: eventId })
      expect((await cli('apps', 'webhook', 'deliveries', app.id)).out).toContain(
        `${delivery?.id}  ${eventId}  user.deleted  delivered  attempts 1  last 204`,
      )
      const replayed = await cli('apps', 'webhook', 'replay', eventId)
      expect(replayed).toMatchObject({ code: 0, out: 'Queued 1 delivery again\n' })
      await createWebhookWorker(services.deps).runOnce()
      await hook.waitFor(2)
      expect(hook.received[1]?.headers['webhook-id']).toBe(eventId)
      expect((await cli('apps', 'webhook', 'replay', 'dlv_unknown')).code).toBe(1)
    } finally {
      await services.close()
    }

    const refusals = [
      [['apps', 'webhook', 'add', app.id], 2, /needs --url/],
      [
        ['apps', 'webhook', 'add', app.id, '--url', 'http://hooks.example.com/x'],
        1,
        /must use https/,
      ],
      [
        ['apps', 'webhook', 'add', app.id, '--url', hook.url, '--events', 'user.exploded'],
        1,
        /Unknown webhook event\(s\): user\.exploded/,
      ],
      [['apps', 'webhook', 'add', 'nosuchapp', '--url', hook.url], 1, /No app with id 'nosuchapp'/],
      [
        ['apps', 'webhook', 'remove', app.id, 'ep_nothing'],
        1,
        /has no webhook endpoint 'ep_nothing'/,
      ],
      [['apps', 'webhook', 'frobnicate', app.id], 2, /Unknown command: apps webhook frobnicate/],
      [['apps', 'webhook', 'list', app.id, '--bogus'], 2, /Unknown option '--bogus'/],
    ] as const
    for (const [argv, code, message] of refusals) {
      const answer = await cli(...argv)
      expect([argv.join(' '), answer.code]).toEqual([argv.join(' '), code])
      expect(answer.err).toMatch(message)
    }

    expect(await cli('apps', 'webhook', 'remove', app.id, endpointId)).toMatchObject({ code: 0 })
    const help = await cli('apps', 'webhook', 'help')
    expect(help.code).toBe(0)
    expect(help.out).toContain('apps webhook replay <deliveryId | eventId>')
    expect((await cli('help')).out).toContain('apps webhook add|list|remove|deliveries|replay')
    expect(JSON.parse((await cli('apps', 'webhook', 'list', app.id, '--json')).out)).toEqual([])
  } finally {
    await hook.close()
  }
}, 120_000)
