/** A lock file so two processes never open the same PGlite data folder. */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Takes the lock or throws naming the holder. A lock left by a process that no longer runs
 * is taken over.
 */
export function acquireLock(file: string): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' })
      let released = false
      return () => {
        if (released) return
        released = true
        rmSync(file, { force: true })
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
      const pid = Number.parseInt(readFileSync(file, 'utf8'), 10)
      if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
        throw new Error(
          `The database folder is in use by process ${pid} (lock file ${file}). ` +
            'PGlite serves one process; use DATABASE_URL for PostgreSQL to run several.',
        )
      }
      rmSync(file, { force: true })
    }
  }
  throw new Error(`Could not take the lock ${file}`)
}
