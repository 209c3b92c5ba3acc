/**
 * Reproduces a race the suite once lost: a test file of the modal ending while its Preact tree is
 * still mounted, with passive effects queued on a Node timer that outlives the file's jsdom
 * environment (CI once failed on `ReferenceError: window is not defined` from App.tsx's focus
 * listener, after modal-app/src/main.test.tsx had finished).
 *
 *   npx tsx scripts/teardown-race.ts [--copies 40] [--busy 1] [--file src/main.test.tsx]
 *                                    [--without-setup]
 *
 * Runs `--copies` copies of the file (default main.test.tsx, imports rewritten, nothing else
 * changed) under the modal-app project's own configuration, setup files included, in a folder
 * of its own at the repository's root, with `--busy` Node processes spinning beside it (the
 * load that widens the window). A probe setup file, whose after-all hook runs after every
 * other one, counts the files that ended with the modal still in the document, and those
 * among them whose first passive effects (the window focus listener) had not run yet: the
 * state in which the error above happens once the timer fires. The error itself shows only
 * when the timer fires while the worker can still report it; the count of Vitest's unhandled
 * errors is printed too.
 */
import { spawn, spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'

const repo = resolve(import.meta.dirname, '..')
const { values } = parseArgs({
  options: {
    copies: { type: 'string', default: '40' },
    busy: { type: 'string', default: '1' },
    file: { type: 'string', default: 'src/main.test.tsx' },
    // Leaves the project's setup files out: the state before the teardown in setup.ts.
    'without-setup': { type: 'boolean', default: false },
  },
})
const copies = Number(values.copies)
const busy = Number(values.busy)
const source = join(repo, 'modal-app', values.file)
const sourceDir = join(source, '..')

const dir = mkdtempSync(join(repo, '.teardown-race-'))
const stopBusy = Array.from({ length: busy }, () =>
  spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }),
)
try {
  // Relative imports point back at the file's own folder; the copies live here so that each
  // is a test file of its own (a fresh module graph, a fresh environment).
  const text = readFileSync(source, 'utf8').replace(/(['"])\.\.?\//g, (match, quote: string) =>
    match.startsWith(`${quote}../`) ? `${quote}${sourceDir}/../` : `${quote}${sourceDir}/`,
  )
  for (let i = 0; i < copies; i++) writeFileSync(join(dir, `copy${i}.test.tsx`), text)
  copyFileSync(join(import.meta.dirname, 'teardown-race-probe.ts'), join(dir, 'probe.ts'))
  writeFileSync(
    join(dir, 'vitest.config.ts'),
    `import { defineConfig } from 'vitest/config'
import root from '../vite.config.ts'

type Project = { resolve?: object; test: { name: string; setupFiles?: string[] } }
const projects = (root.test?.projects ?? []) as Project[]
const modal = projects.find((p) => p.test.name === 'modal-app')
if (!modal) throw new Error('no modal-app project in vite.config.ts')
export default defineConfig({
  resolve: modal.resolve,
  test: {
    ...modal.test,
    name: 'teardown-race',
    root: import.meta.dirname,
    include: ['copy*.test.tsx'],
    // The probe first: after-hooks run in reverse, so its after-all runs last.
    setupFiles: ['probe.ts', ...${values['without-setup'] ? '[]' : "(modal.test.setupFiles ?? []).map((f) => '../modal-app/' + f)"}],
    maxWorkers: '100%',
  },
})
`,
  )
  const started = Date.now()
  const run = spawnSync('npx', ['vitest', 'run', '--config', join(dir, 'vitest.config.ts')], {
    cwd: repo,
    encoding: 'utf8',
    env: { ...process.env, FORCE_COLOR: '0' },
    maxBuffer: 64 * 1024 * 1024,
  })
  const out = `${run.stdout}\n${run.stderr}`
  const count = (pattern: RegExp) => out.match(pattern)?.length ?? 0
  console.log(
    JSON.stringify({
      file: values.file,
      copies,
      busy,
      withoutSetup: values['without-setup'],
      seconds: Math.round((Date.now() - started) / 1000),
      exitCode: run.status,
      mountedAtEnd: count(/TEARDOWN-PROBE mounted/g),
      effectsPendingAtEnd: count(/TEARDOWN-PROBE mounted effects-pending/g),
      unhandledErrors: Number(/Vitest caught (\d+) unhandled error/.exec(out)?.[1] ?? 0),
      windowIsNotDefined: count(/window is not defined/g),
    }),
  )
} finally {
  for (const child of stopBusy) child.kill()
  rmSync(dir, { recursive: true, force: true })
}
