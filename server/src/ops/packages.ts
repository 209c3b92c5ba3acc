/**
 * The npm packages of this release, served by the API until they are on the registry:
 * `GET /packages/` (an index with each tarball's URL and integrity) and
 * `GET /packages/latch-react.tgz` or `/packages/latch-react-0.1.0.tgz` (the tarball `npm pack`
 * made of @latch/react at the server's own version). `npm run build` writes the tarballs into
 * dist/packages (scripts/packages.ts); LATCH_PACKAGES_DIR points elsewhere.
 *
 * A request names a file only by a name this module lists: nothing of the path is joined to
 * the folder, so `..`, encoded slashes or another file of the folder answer 404 like any
 * unknown name.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { LatchError, toApiErrorBody } from '@latch/shared'
import { type Context, Hono } from 'hono'
import type { HonoEnv } from '../http.ts'

/** The packages an integrator installs, by npm name, with their workspace folders. */
export const PUBLIC_PACKAGES = [
  { name: '@latch/host-sdk', dir: 'host-sdk' },
  { name: '@latch/react', dir: 'react' },
  { name: '@latch/wagmi', dir: 'wagmi' },
  { name: '@latch/node', dir: 'server-sdk' },
] as const

/** This server's version: the packages it serves are the ones of the same version. */
export const SERVER_VERSION: string = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8'),
).version

/** Where `npm run build` puts the tarballs, and where the API reads them by default. */
export const PACKAGES_DIST_DIR = fileURLToPath(new URL('../../../dist/packages', import.meta.url))

export const PACKAGES_ROUTE = '/packages'

/** npm pack's file name for a package: `@latch/react` at 0.1.0 is latch-react-0.1.0.tgz. */
export const tarballName = (name: string, version: string) =>
  `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`

/** The name without the version, which always serves this release: latch-react.tgz. */
export const latestTarballName = (name: string) => `${name.replace(/^@/, '').replace('/', '-')}.tgz`

/** npm's `integrity` (SRI, sha512) of a tarball. */
export const integrityOf = (bytes: Uint8Array) =>
  `sha512-${createHash('sha512').update(bytes).digest('base64')}`

interface Tarball {
  bytes: Uint8Array<ArrayBuffer>
  integrity: string
  /** npm's `shasum` (sha1, hex), as `npm pack` prints it. */
  shasum: string
  mtimeMs: number
}

export interface PackageRoutesOptions {
  /** The folder with the tarballs (`npm run build` writes dist/packages). */
  dir?: string
  /** The version served (the server's own). */
  version?: string
  /** The API's public origin for the index's URLs; the request's origin when absent. */
  publicUrl?: string | null
}

export function packageRoutes(options: PackageRoutesOptions = {}): Hono<HonoEnv> {
  const dir = options.dir ?? PACKAGES_DIST_DIR
  const version = options.version ?? SERVER_VERSION
  const routes = new Hono<HonoEnv>()
  // Read once per file and kept while its modification time stays (a rebuild replaces it).
  const cache = new Map<string, Tarball>()

  /** Each name a request may use, to its package and whether the name carries the version. */
  const files = new Map<string, { name: string; file: string; pinned: boolean }>()
  for (const { name } of PUBLIC_PACKAGES) {
    const file = tarballName(name, version)
    files.set(file, { name, file, pinned: true })
    files.set(latestTarballName(name), { name, file, pinned: false })
  }

  async function load(file: string): Promise<Tarball | null> {
    const path = join(dir, file)
    const info = await stat(path).catch(() => null)
    if (!info?.isFile()) return null
    const cached = cache.get(file)
    if (cached && cached.mtimeMs === info.mtimeMs) return cached
    const bytes = new Uint8Array(await readFile(path))
    const tarball = {
      bytes,
      integrity: integrityOf(bytes),
      shasum: createHash('sha1').update(bytes).digest('hex'),
      mtimeMs: info.mtimeMs,
    }
    cache.set(file, tarball)
    return tarball
  }

  const notBuilt = (c: Context<HonoEnv>, file: string) => {
    c.header('cache-control', 'no-store')
    return c.json(
      toApiErrorBody(
        LatchError.of('not_found', {
          message: `This server has not built its packages (${file} is missing from ${dir}): run npm run build on the server`,
        }),
      ),
      404,
    )
  }

  const base = (c: Context<HonoEnv>) => options.publicUrl ?? new URL(c.req.url).origin

  const index = async (c: Context<HonoEnv>) => {
    c.header('cache-control', 'no-cache')
    const packages = []
    for (const { name } of PUBLIC_PACKAGES) {
      const file = tarballName(name, version)
      const tarball = await load(file)
      if (!tarball) return notBuilt(c, file)
      const url = `${base(c)}${PACKAGES_ROUTE}/${file}`
      packages.push({
        name,
        version,
        url,
        latestUrl: `${base(c)}${PACKAGES_ROUTE}/${latestTarballName(name)}`,
        integrity: tarball.integrity,
        shasum: tarball.shasum,
        size: tarball.bytes.byteLength,
        install: `npm install ${url}`,
      })
    }
    return c.json({ version, packages })
  }
  routes.get(PACKAGES_ROUTE, index)
  routes.get(`${PACKAGES_ROUTE}/`, index)

  routes.get(`${PACKAGES_ROUTE}/:file`, async (c) => {
    const requested = c.req.param('file')
    const entry = files.get(requested)
    if (!entry) {
      const offered = PUBLIC_PACKAGES.map(({ name }) => tarballName(name, version)).join(', ')
      c.header('cache-control', 'no-store')
      return c.json(
        toApiErrorBody(
          LatchError.of('not_found', {
            message: `No package ${requested} on this server: it serves version ${version} as ${offered} (index: ${PACKAGES_ROUTE}/)`,
          }),
        ),
        404,
      )
    }
    const tarball = await load(entry.file)
    if (!tarball) return notBuilt(c, entry.file)
    const etag = `"${tarball.integrity}"`
    // The versioned name never changes what it serves; the other follows the server's release.
    c.header(
      'cache-control',
      entry.pinned ? 'public, max-age=31536000, immutable' : 'public, no-cache',
    )
    c.header('etag', etag)
    c.header('repr-digest', `sha-512=:${tarball.integrity.slice('sha512-'.length)}:`)
    c.header('x-content-type-options', 'nosniff')
    if (c.req.header('if-none-match') === etag) return c.body(null, 304)
    c.header('content-type', 'application/gzip')
    c.header('content-disposition', `attachment; filename="${entry.file}"`)
    return c.body(tarball.bytes)
  })
  return routes
}
