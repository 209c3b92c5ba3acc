/** `npm run latch -- apps webhook ...`: an app's endpoints, the delivery log, replays. */
import { parseArgs } from 'node:util'
import { isLatchError, WEBHOOK_EVENT_TYPES } from '@latch/shared'
import { found, OperatorCliError, operatorClient } from '../apps/operator-cli.ts'
import type { CliIo } from '../cli-io.ts'
import { openServices } from '../index.ts'
import {
  addEndpoint,
  type DeliveryLogRow,
  deliveryLog,
  listEndpoints,
  removeEndpoint,
  type WebhookEndpoint,
} from './endpoints.ts'
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

  Each takes --server <url> to go through that running server's operator API (LATCH_ADMIN_KEY).
`

const options = {
  url: { type: 'string' },
  events: { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean' },
  server: { type: 'string' },
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
  if (v.server !== undefined) {
    try {
      return await runWebhookCommand(serverStore(v.server, io), sub, first, second, v, limit, io)
    } catch (e) {
      if (!(e instanceof OperatorCliError)) throw e
      io.err(e.message)
      return 1
    }
  }
  const services = await openServices({ env: io.env, log: io.err })
  const { deps } = services
  const store: WebhookStore = {
    exists: async (appId) =>
      Boolean(
        await deps.db.selectFrom('apps').select('id').where('id', '=', appId).executeTakeFirst(),
      ),
    add: (appId, input) => addEndpoint(deps, appId, input),
    list: (appId) => listEndpoints(deps, appId),
    remove: (appId, endpointId) => removeEndpoint(deps, appId, endpointId),
    deliveries: (appId, n) => deliveryLog(deps.db, appId, n),
    replay: (id) => replay(deps, id),
  }
  try {
    return await runWebhookCommand(store, sub, first, second, v, limit, io)
  } catch (e) {
    io.err(`Error: ${isLatchError(e) ? e.message : (e as Error).message}`)
    return 1
  } finally {
    await services.close()
  }
}

/** What a webhook command reaches: the database, or a running server's operator API. */
interface WebhookStore {
  exists(appId: string): Promise<boolean>
  add(
    appId: string,
    input: { url: string; events?: string },
  ): Promise<WebhookEndpoint & { secret: string }>
  list(appId: string): Promise<WebhookEndpoint[]>
  remove(appId: string, endpointId: string): Promise<boolean>
  deliveries(appId: string, limit: number): Promise<DeliveryLogRow[]>
  replay(id: string): Promise<{ queued: number; disabled: string[] }>
}

function serverStore(server: string, io: CliIo): WebhookStore {
  const call = operatorClient(server, { ...process.env, ...io.env })
  const app = (appId: string) => `/${encodeURIComponent(appId)}`
  return {
    exists: (appId) => found(call(app(appId))),
    add: (appId, input) => call(`${app(appId)}/webhooks`, input),
    list: async (appId) =>
      (await call<{ endpoints: WebhookEndpoint[] }>(`${app(appId)}/webhooks`)).endpoints,
    remove: (appId, endpointId) =>
      found(call(`${app(appId)}/webhooks/${encodeURIComponent(endpointId)}/remove`, {})),
    deliveries: async (appId, n) =>
      (await call<{ deliveries: DeliveryLogRow[] }>(`${app(appId)}/webhooks/deliveries?limit=${n}`))
        .deliveries,
    replay: (id) => call(`/webhooks/${encodeURIComponent(id)}/replay`, {}),
  }
}

async function runWebhookCommand(
  store: WebhookStore,
  sub: string,
  first: string,
  second: string | undefined,
  v: { url?: string | undefined; events?: string | undefined; json?: boolean | undefined },
  limit: number,
  io: CliIo,
): Promise<number> {
  const print = (value: unknown, text: string) =>
    io.out(v.json ? JSON.stringify(value, null, 2) : text)
  if (sub !== 'replay' && !(await store.exists(first))) {
    io.err(`No app with id '${first}'`)
    return 1
  }
  switch (sub) {
    case 'add': {
      const endpoint = await store.add(first, {
        url: v.url ?? '',
        ...(v.events === undefined ? {} : { events: v.events }),
      })
      print(
        endpoint,
        `Added webhook endpoint ${endpoint.id} for ${endpoint.url} (events: ${endpoint.events.join(', ')})\n` +
          `Signing secret (shown only now; keep it where your backend reads it):\n${endpoint.secret}`,
      )
      return 0
    }
    case 'list': {
      const endpoints = await store.list(first)
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
      if (!(await store.remove(first, second ?? ''))) {
        io.err(`App ${first} has no webhook endpoint '${second}'`)
        return 1
      }
      io.out(`Removed webhook endpoint ${second}`)
      return 0
    }
    case 'deliveries': {
      const rows = await store.deliveries(first, limit)
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
                  (r.status === 'pending' ? `  next ${r.next_attempt_at}` : ''),
              )
              .join('\n'),
      )
      return 0
    }
    case 'replay': {
      const { queued, disabled } = await store.replay(first)
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
}
