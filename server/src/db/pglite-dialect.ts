/**
 * Kysely over PGlite. PGlite is one connection, so the driver hands it out to one holder at a
 * time: a transaction keeps it until COMMIT and no other query can slip in between.
 */
import type { PGlite } from '@electric-sql/pglite'
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from 'kysely'

class Mutex {
  #tail: Promise<void> = Promise.resolve()

  /** Resolves with the release function once every earlier holder has released. */
  acquire(): Promise<() => void> {
    let release!: () => void
    const next = new Promise<void>((r) => {
      release = r
    })
    const ready = this.#tail.then(() => release)
    this.#tail = this.#tail.then(() => next)
    return ready
  }
}

/**
 * How long a query waits for the connection. Waiting longer means a stuck holder, or code that
 * used the database handle instead of the transaction handle inside a transaction (which can
 * never proceed on one connection): an error beats a hang.
 */
export const ACQUIRE_TIMEOUT_MS = 30_000

function withTimeout(pending: Promise<() => void>, ms: number): Promise<() => void> {
  return new Promise((resolve, reject) => {
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      reject(
        new Error(
          `Waited ${ms} ms for the PGlite connection; inside a transaction, query through the transaction handle`,
        ),
      )
    }, ms)
    void pending.then((release) => {
      clearTimeout(timer)
      // A waiter that gave up still gets its turn: hand it straight back.
      if (timedOut) release()
      else resolve(release)
    })
  })
}

class PGliteConnection implements DatabaseConnection {
  constructor(readonly client: PGlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.client.query<R>(query.sql, [...query.parameters])
    return result.affectedRows === undefined
      ? { rows: result.rows }
      : { rows: result.rows, numAffectedRows: BigInt(result.affectedRows) }
  }

  // biome-ignore lint/correctness/useYield: PGlite cannot stream; Kysely needs the method.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite does not support streaming')
  }
}

class PGliteDriver implements Driver {
  readonly #mutex = new Mutex()
  readonly #releases = new WeakMap<DatabaseConnection, () => void>()

  constructor(
    readonly client: PGlite,
    readonly handBack: (() => Promise<void>) | undefined,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const release = await withTimeout(this.#mutex.acquire(), ACQUIRE_TIMEOUT_MS)
    // A fresh wrapper per holder keys its release.
    const connection = new PGliteConnection(this.client)
    this.#releases.set(connection, release)
    return connection
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('BEGIN'))
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('COMMIT'))
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('ROLLBACK'))
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    this.#releases.get(connection)?.()
    this.#releases.delete(connection)
  }

  async destroy(): Promise<void> {
    if (!this.handBack) {
      await this.client.close()
      return
    }
    // A lent client goes back only once no query of this Kysely can reach it: its holder has
    // released it, and the lock is kept, so a holder still waiting fails rather than touch a
    // database lent on. One that never lets go makes the client unusable: closed instead.
    const idle = await withTimeout(this.#mutex.acquire(), ACQUIRE_TIMEOUT_MS).catch(() => null)
    if (idle) await this.handBack()
    else await this.client.close()
  }
}

/**
 * Kysely over `client`. Destroying the Kysely closes the client, or, for a client lent by a
 * PgliteSource, runs `handBack` once no query holds it.
 */
export function pgliteDialect(client: PGlite, handBack?: () => Promise<void>): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new PGliteDriver(client, handBack),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  }
}
