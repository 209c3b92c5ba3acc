/**
 * `latch secret rotate`: seals every value stored under the server secret again under a new one.
 *
 * The operator sets the new secret as LATCH_SECRET and the old one as LATCH_SECRET_PREVIOUS on
 * every process (which then open values under either and write only under the new one), runs
 * this, and removes LATCH_SECRET_PREVIOUS once `--check` counts nothing left. Each table is
 * walked by primary key in batches, each batch in its own transaction holding its rows' locks
 * while they are sealed again, so serving goes on and a request changing a row waits for the
 * batch (a few milliseconds) rather than losing its write or ours. A value that already opens
 * under the new secret is left alone: a run that was killed is simply run again, and two runs
 * do not conflict.
 */
import { parseArgs } from 'node:util'
import { LatchError } from '@latch/shared'
import { type RawBuilder, sql } from 'kysely'
import type { CliIo } from '../cli-io.ts'
import { loadConfig } from '../config.ts'
import type { Deps } from '../context.ts'
import { macMade } from '../crypto.ts'
import { openServices } from '../index.ts'
import { type RowKind, type RowOf, refreshTokenKeys, rowMac, rowMacMade } from '../row-mac.ts'
import { pairedValue } from '../wallets/fork-pair.ts'
import { resealCounter, resealedWallet, WALLET_COLUMNS } from '../wallets/reseal.ts'
import { placeOfPasskey } from '../wallets/sealed.ts'

/** What one table holds and how each of its sealed columns was sealed. */
interface SealedTable {
  table: string
  key: string
  columns: readonly { name: string; aad?: (key: string) => string }[]
  /** Only rows where this column is set: most refresh tokens never hold a sealed child. */
  onlySet?: string
}

/**
 * Every value sealed with the server secret's encryption key outside the wallets (whose values,
 * sealed with their place, and attempt-state MAC are handled by wallets/reseal.ts). Short-lived
 * values are here too: a rotated refresh token's sealed child lives 10 s, but sealing it again
 * costs nothing and lets `--check` mean "nothing left", whatever the timing.
 */
const TABLES: readonly SealedTable[] = [
  { table: 'apps', key: 'id', columns: [{ name: 'oauth_sealed' }, { name: 'rpc_urls_sealed' }] },
  { table: 'signing_keys', key: 'kid', columns: [{ name: 'private_sealed' }] },
  {
    table: 'webhook_endpoints',
    key: 'id',
    // webhooks/endpoints.ts seals each endpoint's secret for its own row.
    columns: [{ name: 'secret_sealed', aad: (id) => `webhook-secret:${id}` }],
  },
  {
    table: 'sponsors',
    key: 'id',
    // sponsor/store.ts seals each sponsor's key for its own row.
    columns: [{ name: 'private_sealed', aad: (id) => `sponsor-key:${id}` }],
  },
  {
    table: 'refresh_tokens',
    key: 'hash',
    columns: [{ name: 'child_sealed' }],
    onlySet: 'child_sealed',
  },
]

type Raw = Record<string, unknown>
const text = (v: unknown) => String(v)

/** A table whose rows carry a MAC of what they grant (row-mac.ts), and how to read one. */
interface MacTable<K extends RowKind> {
  table: string
  key: string
  kind: K
  mac: string
  columns: readonly string[]
  row: (r: Raw) => RowOf<K>
}

const macTable = <K extends RowKind>(t: MacTable<K>) => t as unknown as MacTable<RowKind>

/**
 * Every row MAC outside the wallets (whose attempt counter moves with their state MAC) and the
 * refresh tokens (keyed again below).
 */
const MAC_TABLES: readonly MacTable<RowKind>[] = [
  macTable({
    table: 'linked_accounts',
    key: 'id',
    kind: 'linked_account',
    mac: 'mac',
    columns: ['app_id', 'user_id', 'type', 'identifier'],
    row: (r) => ({
      id: text(r.id),
      app_id: text(r.app_id),
      user_id: text(r.user_id),
      type: text(r.type),
      identifier: text(r.identifier),
    }),
  }),
  macTable({
    table: 'sessions',
    key: 'id',
    kind: 'session',
    mac: 'mac',
    columns: ['app_id', 'user_id', 'family_id', 'parent_id', 'created_at', 'expires_at'],
    row: (r) => ({
      id: text(r.id),
      app_id: text(r.app_id),
      user_id: text(r.user_id),
      family_id: text(r.family_id),
      parent_id: r.parent_id === null ? null : text(r.parent_id),
      created_at: r.created_at instanceof Date ? r.created_at : new Date(text(r.created_at)),
      expires_at: r.expires_at instanceof Date ? r.expires_at : new Date(text(r.expires_at)),
    }),
  }),
  macTable({
    table: 'passkeys',
    key: 'account_id',
    kind: 'passkey',
    mac: 'mac',
    columns: ['app_id', 'credential_id', 'user_id', 'public_key', 'user_handle'],
    row: (r) => ({
      app_id: text(r.app_id),
      credential_id: text(r.credential_id),
      account_id: text(r.account_id),
      user_id: text(r.user_id),
      public_key: text(r.public_key),
      user_handle: text(r.user_handle),
    }),
  }),
  macTable({
    table: 'sponsors',
    key: 'id',
    kind: 'sponsor',
    mac: 'mac',
    columns: ['app_id', 'chain_id', 'address', 'policy'],
    row: (r) => ({
      id: text(r.id),
      app_id: text(r.app_id),
      chain_id: Number(r.chain_id),
      address: text(r.address),
      policy: text(r.policy),
    }),
  }),
  macTable({
    table: 'signing_keys',
    key: 'kid',
    kind: 'signing_key',
    mac: 'mac',
    columns: ['app_id', 'public_pem'],
    row: (r) => ({ kid: text(r.kid), app_id: text(r.app_id), public_pem: text(r.public_pem) }),
  }),
  macTable({
    table: 'apps',
    key: 'id',
    kind: 'app_origins',
    mac: 'origins_mac',
    columns: ['allowed_origins'],
    row: (r) => ({
      id: text(r.id),
      allowed_origins: (typeof r.allowed_origins === 'string'
        ? JSON.parse(r.allowed_origins)
        : r.allowed_origins) as string[],
    }),
  }),
  macTable({
    table: 'webhook_endpoints',
    key: 'id',
    kind: 'webhook_endpoint',
    mac: 'mac',
    columns: ['app_id', 'url'],
    row: (r) => ({ id: text(r.id), app_id: text(r.app_id), url: text(r.url) }),
  }),
]

/**
 * Rows, one count each, whatever number of sealed values a row holds: the unit the progress
 * lines (`<table>: <n> row(s) done`) and the summary share.
 */
export interface TableCount {
  /** Rows sealed again under the new secret (with `check`: still under the previous one). */
  resealed: number
  /** Rows whose every value is already under the new secret. */
  current: number
  /** Rows holding a value that opens under neither secret: that value is left and reported. */
  unreadable: number
}

export interface RotationReport {
  tables: Record<string, TableCount>
  resealed: number
  unreadable: number
}

export interface RotationOptions {
  /** Count only: change nothing. */
  check?: boolean
  /** Rows per transaction (default 200). */
  batchSize?: number
  /** Called after each batch is committed; a throw stops the run there (tests stop it so). */
  onBatch?: (table: string, rows: number) => void | Promise<void>
}

const DEFAULT_BATCH = 200

export async function rotateSecret(
  deps: Deps,
  options: RotationOptions = {},
): Promise<RotationReport> {
  const batch = options.batchSize ?? DEFAULT_BATCH
  const report: RotationReport = { tables: {}, resealed: 0, unreadable: 0 }
  const count = (table: string): TableCount => {
    report.tables[table] ??= { resealed: 0, current: 0, unreadable: 0 }
    return report.tables[table]
  }
  for (const spec of TABLES) {
    const tally = count(spec.table)
    const scope = { table: spec.table, key: spec.key, onlySet: spec.onlySet }
    await walk(deps, scope, batch, options, async (trx, keys) => {
      const cols = [spec.key, ...spec.columns.map((c) => c.name)]
      const { rows } = await sql<Record<string, string | null>>`
        SELECT ${sql.join(cols.map((c) => sql.ref(c)))} FROM ${sql.table(spec.table)}
        WHERE ${sql.ref(spec.key)} IN (${sql.join(keys)}) FOR UPDATE`.execute(trx)
      for (const row of rows) {
        const key = String(row[spec.key])
        const set: RawBuilder<unknown>[] = []
        let unreadable = false
        for (const column of spec.columns) {
          const sealed = row[column.name]
          if (sealed === null || sealed === undefined) continue
          const aad = column.aad?.(key)
          let opened: { value: string; previous: boolean }
          try {
            opened = deps.secrets.open(sealed, aad)
          } catch {
            unreadable = true
            deps.log(`[latch] ${spec.table} ${key}: ${column.name} opens under neither secret`)
            continue
          }
          if (opened.previous) {
            set.push(sql`${sql.ref(column.name)} = ${deps.secrets.encrypt(opened.value, aad)}`)
          }
        }
        // The row's readable values are sealed again all the same; it is counted once.
        if (unreadable) tally.unreadable++
        else if (set.length > 0) tally.resealed++
        else tally.current++
        if (set.length > 0 && !options.check) {
          await sql`UPDATE ${sql.table(spec.table)} SET ${sql.join(set)}
            WHERE ${sql.ref(spec.key)} = ${key}`.execute(trx)
        }
      }
    })
  }
  for (const spec of MAC_TABLES) {
    const label = `${spec.table}.${spec.mac}`
    const tally = count(label)
    const scope = { table: spec.table, key: spec.key, label }
    await walk(deps, scope, batch, options, async (trx, keys) => {
      const cols = [...new Set([spec.key, spec.mac, ...spec.columns])]
      const { rows } = await sql<Raw>`
        SELECT ${sql.join(cols.map((c) => sql.ref(c)))} FROM ${sql.table(spec.table)}
        WHERE ${sql.ref(spec.key)} IN (${sql.join(keys)}) FOR UPDATE`.execute(trx)
      for (const r of rows) {
        const key = text(r[spec.key])
        const row = spec.row(r)
        const made = rowMacMade(deps.secrets, spec.kind, row, r[spec.mac] as string | null)
        if (made === null) {
          tally.unreadable++
          deps.log(`[latch] ${spec.table} ${key}: its MAC holds under neither secret`)
          continue
        }
        if (made === 'current') {
          tally.current++
          continue
        }
        tally.resealed++
        if (!options.check) {
          await sql`UPDATE ${sql.table(spec.table)}
            SET ${sql.ref(spec.mac)} = ${rowMac(deps.secrets, spec.kind, row)}
            WHERE ${sql.ref(spec.key)} = ${key}`.execute(trx)
        }
      }
    })
  }
  // A refresh token is keyed by a MAC of its SHA-256: keyed again under the new secret once the
  // old key is checked to be that MAC (a SHA-256 written by someone without the secret is not
  // keyed by either, and stays refused), with its row's MAC and its parent's pointer to it.
  const tokens = count('refresh_tokens.hash')
  const tokenScope = { table: 'refresh_tokens', key: 'hash', label: 'refresh_tokens.hash' }
  await walk(deps, tokenScope, batch, options, async (trx, keys) => {
    const rows = await trx
      .selectFrom('refresh_tokens')
      .select(['hash', 'token_sha256', 'session_id', 'mac'])
      .where('hash', 'in', keys)
      .forUpdate()
      .execute()
    for (const row of rows) {
      const [current, previous] = refreshTokenKeys(deps.secrets, row.token_sha256)
      const bound = { hash: row.hash, session_id: row.session_id }
      if (row.hash === current && rowMacMade(deps.secrets, 'refresh_token', bound, row.mac)) {
        tokens.current++
        continue
      }
      if (row.hash !== current && row.hash !== previous) {
        tokens.unreadable++
        deps.log(`[latch] refresh_tokens ${row.hash}: keyed under neither secret`)
        continue
      }
      if (rowMacMade(deps.secrets, 'refresh_token', bound, row.mac) === null) {
        tokens.unreadable++
        deps.log(`[latch] refresh_tokens ${row.hash}: its MAC holds under neither secret`)
        continue
      }
      tokens.resealed++
      if (options.check || current === undefined) continue
      const next = { hash: current, session_id: row.session_id }
      await trx
        .updateTable('refresh_tokens')
        .set({ hash: current, mac: rowMac(deps.secrets, 'refresh_token', next) })
        .where('hash', '=', row.hash)
        .execute()
      await trx
        .updateTable('refresh_tokens')
        .set({ child_hash: current })
        .where('child_hash', '=', row.hash)
        .execute()
    }
  })
  const wallets = count('wallets')
  await walk(deps, { table: 'wallets', key: 'id' }, batch, options, async (trx, keys) => {
    const rows = await trx
      .selectFrom('wallets')
      .select(WALLET_COLUMNS)
      .where('id', 'in', keys)
      .forUpdate()
      .execute()
    for (const row of rows) {
      let columns: ReturnType<typeof resealedWallet>
      try {
        columns = resealedWallet(deps, row)
      } catch (e) {
        if (!(e instanceof LatchError)) throw e
        wallets.unreadable++
        continue
      }
      if (columns === null) {
        wallets.current++
        continue
      }
      wallets.resealed++
      if (!options.check) {
        await trx.updateTable('wallets').set(columns).where('id', '=', row.id).execute()
        // The attempt counter names the state MAC: it moves to the new one with it.
        await resealCounter(deps, trx, row, columns.state_mac)
      }
    }
  })
  // Each passkey sealing is sealed for its wallet's place and credential (wallets/passkeys.ts).
  const passkeys = count('wallet_passkeys')
  await walk(deps, { table: 'wallet_passkeys', key: 'id' }, batch, options, async (trx, keys) => {
    const rows = await trx
      .selectFrom('wallet_passkeys as p')
      .innerJoin('wallets as w', 'w.id', 'p.wallet_id')
      .select(['p.id', 'p.credential_id', 'p.sealing_sealed', 'w.app_id', 'w.user_id', 'w.address'])
      .select('w.id as wallet_id')
      .where('p.id', 'in', keys)
      .forUpdate()
      .execute()
    for (const row of rows) {
      const place = {
        id: row.wallet_id,
        app_id: row.app_id,
        user_id: row.user_id,
        address: row.address,
      }
      const aad = placeOfPasskey(place, row.credential_id)
      let opened: { value: string; previous: boolean }
      try {
        opened = deps.secrets.open(row.sealing_sealed, aad)
      } catch {
        passkeys.unreadable++
        deps.log(`[latch] wallet_passkeys ${row.id}: the sealing opens under neither secret`)
        continue
      }
      if (!opened.previous) {
        passkeys.current++
        continue
      }
      passkeys.resealed++
      if (!options.check) {
        await trx
          .updateTable('wallet_passkeys')
          .set({ sealing_sealed: deps.secrets.encrypt(opened.value, aad) })
          .where('id', '=', row.id)
          .execute()
      }
    }
  })
  // A fork's pairing is a MAC over app, forking and forked session (wallets/fork-pair.ts): made
  // again under the new secret, or the paired fork would lose the wallet with the old secret.
  const pairings = count('fork_tokens')
  await walk(
    deps,
    { table: 'fork_tokens', key: 'hash', onlySet: 'paired_mac' },
    batch,
    options,
    async (trx, keys) => {
      const rows = await trx
        .selectFrom('fork_tokens as t')
        .innerJoin('sessions as s', 's.id', 't.session_id')
        .select(['t.hash', 't.paired_mac', 't.session_id', 't.redeemed_session_id', 's.app_id'])
        .where('t.hash', 'in', keys)
        .forUpdate('t')
        .execute()
      for (const row of rows) {
        if (!row.paired_mac || !row.redeemed_session_id) continue
        const value = pairedValue(row.app_id, row.session_id, row.redeemed_session_id)
        const made = macMade(deps.secrets, 'fork-paired', value, row.paired_mac)
        if (made === null) {
          pairings.unreadable++
          deps.log(`[latch] fork_tokens: a pairing's MAC opens under neither secret`)
          continue
        }
        if (made === 'current') {
          pairings.current++
          continue
        }
        pairings.resealed++
        if (!options.check) {
          await trx
            .updateTable('fork_tokens')
            .set({ paired_mac: deps.secrets.mac('fork-paired', value) })
            .where('hash', '=', row.hash)
            .execute()
        }
      }
    },
  )
  for (const tally of Object.values(report.tables)) {
    report.resealed += tally.resealed
    report.unreadable += tally.unreadable
  }
  return report
}

type Trx = Parameters<Parameters<ReturnType<Deps['db']['transaction']>['execute']>[0]>[0]

/** Visits a table's rows by ascending key, `batch` at a time, each batch in its own transaction. */
async function walk(
  deps: Deps,
  {
    table,
    key,
    onlySet,
    label = table,
  }: {
    table: string
    key: string
    onlySet?: string | undefined
    /** The name its progress lines and its count go by, where a table is walked twice. */
    label?: string
  },
  batch: number,
  options: RotationOptions,
  visit: (trx: Trx, keys: string[]) => Promise<void>,
): Promise<void> {
  let after: string | null = null
  for (;;) {
    const where = [
      ...(after === null ? [] : [sql`${sql.ref(key)} > ${after}`]),
      ...(onlySet ? [sql`${sql.ref(onlySet)} IS NOT NULL`] : []),
    ]
    const { rows }: { rows: { k: string }[] } = await sql<{ k: string }>`
      SELECT ${sql.ref(key)} AS k FROM ${sql.table(table)}
      ${where.length > 0 ? sql`WHERE ${sql.join(where, sql` AND `)}` : sql``}
      ORDER BY ${sql.ref(key)} LIMIT ${batch}`.execute(deps.db)
    if (rows.length === 0) return
    const keys: string[] = rows.map((r: { k: string }) => r.k)
    await deps.db.transaction().execute((trx) => visit(trx, keys))
    after = keys[keys.length - 1] ?? null
    await options.onBatch?.(label, keys.length)
    if (rows.length < batch) return
  }
}

export const SECRET_USAGE = `Usage: npm run latch -- secret rotate [--check] [--batch <rows>] [--json]

  Seals every value stored under the server secret again under a new one. Set LATCH_SECRET
  (or LATCH_SECRET_FILE) to the new secret and LATCH_SECRET_PREVIOUS (or
  LATCH_SECRET_PREVIOUS_FILE) to the old one, on every process, then run it. A run that was
  stopped resumes when run again. --check changes nothing, counts what is still under the
  previous secret and exits 1 while anything is. Once it exits 0, remove
  LATCH_SECRET_PREVIOUS and restart. See docs/production.md, "Rotating the secret".`

/** `secret rotate [--check]`. */
export async function secretCommand(argv: string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (e) {
    io.err(`${(e as Error).message}\n\n${SECRET_USAGE}`)
    return 2
  }
  const { values, positionals } = parsed
  if (values.help || positionals[0] === 'help') {
    io.out(SECRET_USAGE)
    return 0
  }
  if (positionals[0] !== 'rotate' || positionals.length > 1) {
    io.err(SECRET_USAGE)
    return 2
  }
  const batchSize = values.batch === undefined ? DEFAULT_BATCH : Number(values.batch)
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
    io.err('--batch must be a whole number of rows from 1 to 10000')
    return 2
  }
  const check = values.check === true
  if (!check && loadConfig({ ...process.env, ...io.env }).secretPrevious === null) {
    io.err(
      'secret rotate needs the old secret in LATCH_SECRET_PREVIOUS (or LATCH_SECRET_PREVIOUS_FILE) and the new one in LATCH_SECRET',
    )
    return 2
  }
  const services = await openServices({ env: io.env, log: io.err, migrate: false })
  try {
    const { deps } = services
    const report = await rotateSecret(deps, {
      check,
      batchSize,
      onBatch: (table, rows) => {
        if (!values.json && !check) io.err(`[latch] ${table}: ${rows} row(s) done`)
      },
    })
    if (values.json) io.out(JSON.stringify(report, null, 2))
    else {
      for (const [table, t] of Object.entries(report.tables)) {
        const what = check ? 'under the previous secret' : 'sealed again'
        io.out(
          `${table}: ${t.resealed} row(s) ${what}, ${t.current} already under the new secret${t.unreadable ? `, ${t.unreadable} with a value under neither` : ''}`,
        )
      }
      io.out(
        check
          ? report.resealed === 0 && report.unreadable === 0
            ? 'Nothing is left under the previous secret: LATCH_SECRET_PREVIOUS can be removed'
            : `${report.resealed} row(s) still under the previous secret: run secret rotate`
          : `Sealed ${report.resealed} row(s) again under the new secret`,
      )
    }
    if (report.unreadable > 0) {
      io.err(
        `${report.unreadable} row(s) hold a value that opens under neither secret (named in the lines above); it was left as it is`,
      )
      return 1
    }
    return check && report.resealed > 0 ? 1 : 0
  } finally {
    await services.close()
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      check: { type: 'boolean' },
      batch: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
    strict: true,
  })
}
