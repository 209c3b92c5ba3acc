/**
 * For the modal server's tests: a modal that looks built (an index.html with the API URL's meta
 * tag, an empty SDK folder) in a temporary folder that lives as long as the test file, and the
 * server started on it with the options a test gives (the API is never reached: port 9).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { type ModalServerOptions, startModalServer } from '../../server.ts'

export function useMinimalModal(
  prefix: string,
): (options?: Partial<ModalServerOptions>) => ReturnType<typeof startModalServer> {
  let dir = ''
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix))
    await mkdir(join(dir, 'dist'), { recursive: true })
    await mkdir(join(dir, 'sdk'))
    await writeFile(
      join(dir, 'dist/index.html'),
      '<!doctype html><html><head><meta name="latch-api-url" content="" /></head><body></body></html>',
    )
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))
  return (options = {}) =>
    startModalServer({
      apiUrl: 'http://127.0.0.1:9',
      distDir: join(dir, 'dist'),
      sdkDir: join(dir, 'sdk'),
      ...options,
    })
}
