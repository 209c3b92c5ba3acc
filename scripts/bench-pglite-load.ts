/**
 * `npm run bench -- pglite-load [rounds]`: the CPU an in-memory PGlite takes to start from a
 * dump of the migrated database (what each in-memory test server and e2e harness does), for a
 * dump taken as the files stood after the migrations and for one taken after a CHECKPOINT
 * (server/src/testing/global-setup.ts). The two are loaded alternately in one process, each
 * until its first answer; the process's CPU (user and system, its compiler threads included)
 * per load is printed, then each dump's median.
 */
import { PGlite } from '@electric-sql/pglite'
import { Kysely } from 'kysely'
import { migrate } from '../server/src/db/migrations.ts'
import { pgliteDialect } from '../server/src/db/pglite-dialect.ts'
import { checkpointedDump } from '../server/src/testing/global-setup.ts'
import { median } from './median.ts'

async function dumps(): Promise<{ asIs: Blob; checkpointed: Blob }> {
  const client = new PGlite()
  const db = new Kysely<unknown>({ dialect: pgliteDialect(client) })
  try {
    await client.waitReady
    await migrate(db)
    const asIs = await client.dumpDataDir('none')
    return { asIs, checkpointed: await checkpointedDump(client) }
  } finally {
    await db.destroy()
  }
}

/** CPU milliseconds of one load, to its first answer. */
async function load(data: Blob): Promise<number> {
  const before = process.cpuUsage()
  const client = new PGlite({ loadDataDir: data })
  await client.query('select 1')
  const used = process.cpuUsage(before)
  await client.close()
  return (used.user + used.system) / 1000
}

export default async function run(args: string[]): Promise<void> {
  const rounds = Number(args[0] ?? 8)
  const { asIs, checkpointed } = await dumps()
  // The first loads also compile PGlite's WebAssembly: not counted.
  await load(asIs)
  await load(checkpointed)
  const times = { asIs: [] as number[], checkpointed: [] as number[] }
  for (let round = 0; round < rounds; round++) {
    times.asIs.push(await load(asIs))
    times.checkpointed.push(await load(checkpointed))
    console.log(
      `round ${round + 1}: as is ${times.asIs.at(-1)?.toFixed(0)} ms, checkpointed ${times.checkpointed.at(-1)?.toFixed(0)} ms`,
    )
  }
  console.log(
    `median CPU per load: as is ${median(times.asIs).toFixed(0)} ms, checkpointed ${median(times.checkpointed).toFixed(0)} ms`,
  )
}
