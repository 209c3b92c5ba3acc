/** `npm run latch -- apps webhook ...`: an app's endpoints, the delivery log, replays. */
import { parseArgs } from 'node:util'
import { isLatchError } from '@latch/shared'
import type { CliIo } from '../cli.ts'
import { openServices } from '../index.ts'
import { addEndpoint, listEndpoints, removeEndpoint } from './endpoints.ts'
import { WEBHOOK_EVENT_TYPES } from './events.ts'
import { replay } from './worker.ts'

export const WEBHOOK_USAGE = `Webhooks (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature):

  apps webhook add <appId> --url <https url> [--events <list>] [--json]
                                 Add an endpoint; prints its signing secret (whsec_...) once.
                                 --events: comma-separated, or * for all (the default):
                                 ${WEBHOOK_EVENT_TYPES.join(', ')}
  apps webhook list <appId> [--json]
  apps webhook remove <appId> <endpointId>
                                 Remove an endpoint and its queued deliveries
  apps webhook deliveries <appId> [--limit <n>] [--json]
                                 The delivery log, newest first (default 20)
  apps webhook replay <deliveryId | eventId>
                                 Send again (same webhook-id), retried for another 24 hours
`

const options = {
  url: { type: 'string' },
  events: { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

/** Runs `apps webhook <args>`; resolves with the exit code. */
export async function webhookCommand(args: string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true })
  } catch (e) {
    io.err(`${(e as Error).message}\n\n${WEBHOOK_USAGE}`)
    return 2
  }
  const { values: v, positionals } = parsed
  const [sub, first, second] = positionals
  if (v.help || !sub || sub === 'help') {
    io.out(WEBHOOK_USAGE)
    return v.help || sub === 'help' ? 0 : 2
  }
  const usage = (message: string) => {
    io.err(`${message}\n\n${WEBHOOK_USAGE}`)
    return 2
  }
  if (!['add', 'list', 'remove', 'deliveries', 'replay'].includes(sub)) {
    return usage(`Unknown command: apps webhook ${sub}`)
  }
  if (!first) return usage(`apps webhook ${sub} needs ${sub === 'replay' ? 'an id' : 'an app id'}`)
  if (sub === 'add' && !v.url) return usage('apps webhook add needs --url')
  if (sub === 'remove' && !second) return usage('apps webhook remove needs an endpoint id')
  const limit = v.limit === undefined ? 20 : Number(v.limit)
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    return usage('--limit takes a number from 1 to 1000')
  }
  const services = await openServices({ env: io.env, log: io.err })
  const { deps } = services
  const print = (value: unknown, text: string) =>
    io.out(v.json ? JSON.stringify(value, null, 2) : text)
  try {
    const exists = await deps.db
      .selectFrom('apps')
      .select('id')
      .where('id', '=', first)
      .executeTakeFirst()
    if (sub !== 'replay' && !exists) {
      io.err(`No app with id '${first}'`)
      return 1
    }
    switch (sub) {
      case 'add': {
        const endpoint = await addEndpoint(deps, first, { url: v.url ?? '', events: v.events })
        print(
          endpoint,
          `Added webhook endpoint ${endpoint.id} for ${endpoint.url} (events: ${endpoint.events.join(', ')})\n` +
            `Signing secret (shown only now; keep it where your backend reads it):\n${endpoint.secret}`,
        )
        return 0
      }
      case 'list': {
        const endpoints = await listEndpoints(deps, first)
        print(
          endpoints,
          endpoints.length === 0
            ? `No webhook endpoints. Add one with: npm run latch -- apps webhook add ${first} --url https://…`
            : endpoints
                .map(
                  (e) =>
                    `${e.id}  ${e.url}  events: ${e.events.join(',')}` +
                    (e.disabledAt ? `  DISABLED ${e.disabledAt}: ${e.disabledReason}` : ''),
                )
                .join('\n'),
        )
        return 0
      }
      case 'remove': {
        if (!(await removeEndpoint(deps, first, second ?? ''))) {
          io.err(`App ${first} has no webhook endpoint '${second}'`)
          return 1
        }
        io.out(`Removed webhook endpoint ${second}`)
        return 0
      }
      case 'deliveries': {
        const rows = await deps.db
          .selectFrom('webhook_deliveries')
          .select([
            'id',
            'event_id',
            'endpoint_id',
            'event_type',
            'status',
            'attempts',
            'next_attempt_at',
            'last_status',
            'last_error',
            'created_at',
            'finished_at',
          ])
          .where('app_id', '=', first)
          .orderBy('created_at', 'desc')
          .orderBy('id')
          .limit(limit)
          .execute()
        print(
          rows,
          rows.length === 0
            ? 'No deliveries'
            : rows
                .map(
                  (r) =>
                    `${r.id}  ${r.event_id}  ${r.event_type}  ${r.status}  attempts ${r.attempts}` +
                    (r.last_status !== null ? `  last ${r.last_status}` : '') +
                    (r.last_error ? `  (${r.last_error})` : '') +
                    (r.status === 'pending' ? `  next ${r.next_attempt_at.toISOString()}` : ''),
                )
                .join('\n'),
        )
        return 0
      }
      case 'replay': {
        const { queued, disabled } = await replay(deps, first)
        for (const id of disabled) {
          io.err(
            `Endpoint ${id} is disabled (it answered 410 Gone): remove it and add it again to receive events`,
          )
        }
        if (queued === 0 && disabled.length === 0) {
          io.err(`No delivery or event with id '${first}'`)
          return 1
        }
        io.out(`Queued ${queued} deliver${queued === 1 ? 'y' : 'ies'} again`)
        return queued > 0 ? 0 : 1
      }
    }
    return 2
  } catch (e) {
    io.err(`Error: ${isLatchError(e) ? e.message : (e as Error).message}`)
    return 1
  } finally {
    await services.close()
  }
}
