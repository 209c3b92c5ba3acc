/** Which migrations a database still lacks, without changing it (`latch migrate --check`, /readyz). */
import { type Kysely, Migrator } from 'kysely'
import type { Secrets } from '../crypto.ts'
import { MIGRATIONS, migrate } from '../db/migrations.ts'

export interface MigrationState {
  /** Names this release knows and the database has run, in order. */
  applied: string[]
  /** Names this release knows and the database has not run yet, in order. */
  pending: string[]
}

/**
 * Reads the migration table (Kysely's `kysely_migration`); a database that has none yet has
 * every migration pending. Creates nothing.
 */
export async function migrationState(db: Kysely<unknown>): Promise<MigrationState> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => ({ ...MIGRATIONS }) },
  })
  const all = await migrator.getMigrations()
  return {
    applied: all.filter((m) => m.executedAt !== undefined).map((m) => m.name),
    pending: all.filter((m) => m.executedAt === undefined).map((m) => m.name),
  }
}

/** Runs the pending migrations, sealing with `secrets` what they seal; answers the names it ran. */
export async function runMigrations(db: Kysely<unknown>, secrets: Secrets): Promise<string[]> {
  const before = await migrationState(db)
  await migrate(db, secrets)
  return before.pending
}
