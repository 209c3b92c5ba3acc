/**
 * docs/production.md, run: Debian's nginx with the guide's own configuration (read from the
 * guide; only the names, ports and certificate paths swapped for the test's) terminating TLS in
 * front of `latch serve` started as an operator would (NODE_ENV=production, a separate
 * `latch migrate`, `apps create`, then `serve`), on www., auth., api. and connect.example.test. In
 * Chromium a visitor signs in by e-mail code, creates a wallet and signs a message through it;
 * then (on PostgreSQL) a pg_dump backup restored into a new database, served by a new process
 * after the old one drained on SIGTERM, lets that visitor sign in on a new device, recover the
 * wallet and sign.
 * Skipped, with a message, only where the nginx binary is missing (`.ci/run` installs it).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  POSTGRES_BIN,
  type RunningPostgres,
  startPostgres,
  startSmtpCatcher,
} from '@latch/server/testing'
import type { LoginResult, ServerAppConfig, WalletAccount } from '@latch/shared'
import { HOST_ELEMENT_IDS } from '@latch/shared'
import type { Browser, BrowserContext } from 'playwright-core'
import { recoverMessageAddress } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { runCli } from '../../server/src/cli.ts'
import { buildFrontendOnce } from './build.ts'
import { enterCode, expectOk, latchCall, settle, submitEmail, visit } from './flows.ts'
import {
  freePort,
  type HostPage,
  launchChromium,
  WAIT_MS,
  waitReady,
  withTimeout,
} from './harness.ts'
import { type HostServer, startHostServer } from './host-server.ts'
import { SAME_SITE_CHROMIUM_ARGS, testCertificate } from './same-site.ts'
import { SCREENS, signThroughScreen, walletCall } from './wallet-flows.ts'

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((path) => existsSync(path))
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** The guide's `latch` (node_modules/.bin/latch links to it). */
const LATCH_BIN = join(ROOT, 'server/bin/latch.js')
const GUIDE = join(ROOT, 'docs/production.md')
const SECRET = 'production-guide-secret-0123456789abcdef'

if (!NGINX) {
  console.warn(
    '[production.spec] skipped: no nginx binary (apt-get install -y nginx; .ci/run installs it)',
  )
}

/** The guide's nginx block, as written. */
function guideNginxConfig(): string {
  const block = /```nginx\n([\s\S]*?)```/.exec(readFileSync(GUIDE, 'utf8'))?.[1]
  if (!block) throw new Error('docs/production.md has no nginx block')
  return block
}

/** nginx's version, e.g. [1, 22, 1] (`nginx -v` writes it to stderr). */
function nginxVersion(binary: string): number[] {
  const { stderr, stdout } = spawnSync(binary, ['-v'], { encoding: 'utf8', timeout: 10_000 })
  const match = /nginx\/(\d+)\.(\d+)\.(\d+)/.exec(`${stderr}${stdout}`)
  if (!match) throw new Error(`cannot read nginx's version from: ${stderr}${stdout}`)
  return match.slice(1).map(Number)
}

/** Whether something accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/** Waits for a line matching `pattern` in what the child prints, or fails after `ms`. */
function waitForOutput(child: ChildProcess, pattern: RegExp, ms: number, what: string) {
  let seen = ''
  return withTimeout(
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = (d: Buffer) => {
        seen += d.toString()
        const match = pattern.exec(seen)
        if (match) resolve(match)
      }
      child.stdout?.on('data', check)
      child.stderr?.on('data', check)
      child.once('exit', (code) => reject(new Error(`${what} exited (${code}): ${seen}`)))
    }),
    ms,
    what,
  )
}

describe.skipIf(!NGINX)('the production guide behind nginx', () => {
  let dir = ''
  let port = 0
  const origin = (sub: string) => `https://${sub}.example.test:${port}`
  let smtp: Awaited<ReturnType<typeof startSmtpCatcher>>
  let latch: ChildProcess | undefined
  let nginx: ChildProcess | undefined
  let host: HostServer
  let browser: Browser
  let app: ServerAppConfig
  /** The Content-Security-Policy `latch csp` printed, which the host page is served with. */
  let hostCsp = ''
  let postgres: RunningPostgres | null = null
  /** The operator's environment for `latch serve`, from the guide's Settings. */
  let env: Record<string, string> = {}
  /** The visitor of the first test and their wallet, for the backup test. */
  let visitor: { email: string; address: string } | null = null
  const kill = () => {
    latch?.kill('SIGKILL')
    nginx?.kill('SIGKILL')
  }

  /** `latch serve` as a child process, the executable the guide runs; resolves once both listen. */
  const startLatch = async (serveEnv: Record<string, string>) => {
    latch = spawn(process.execPath, [LATCH_BIN, 'serve'], {
      cwd: ROOT,
      env: { ...process.env, ...serveEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    await waitForOutput(latch, /Latch modal listening on/, 60_000, 'latch serve')
  }
  /** SIGTERM, as a process manager stops it; resolves with the exit code. */
  const stopLatch = async (): Promise<number | null> => {
    const child = latch
    if (!child || child.exitCode !== null) return child?.exitCode ?? null
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
    child.kill('SIGTERM')
    return withTimeout(exited, 15_000, 'latch serve stopping on SIGTERM')
  }
  /** The host page in a fresh context (a new device), once the SDK is ready. */
  const openPage = async (context: BrowserContext): Promise<HostPage> => {
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    const response = await page.goto(`${origin('www')}/?appId=${app.id}`, { waitUntil: 'load' })
    expect(response?.headers()['content-security-policy']).toBe(hostCsp)
    const hp: HostPage = {
      context,
      page,
      modal: page.frameLocator(`[data-testid="${HOST_ELEMENT_IDS.frame}"]`),
      errors,
      console: [],
    }
    await waitReady(hp)
    return hp
  }
  const signIn = async (hp: HostPage, email: string) => {
    const login = latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    await submitEmail(hp.modal, email)
    const code = await withTimeout(
      smtp.waitForCode(email, { timeoutMs: WAIT_MS }),
      WAIT_MS + 1000,
      'the code mail',
    )
    await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
    await enterCode(hp.modal, code)
    expect(expectOk(await settle(login, 'login()')).user.email?.address).toBe(email)
  }

  beforeAll(async () => {
    process.once('exit', kill)
    dir = mkdtempSync(join(tmpdir(), 'latch-production-'))
    // nginx's workers run as another user when started as root: they read the temp folders.
    chmodSync(dir, 0o755)
    const [dirs, catcher, browserUp, pgUp] = await Promise.all([
      withTimeout(buildFrontendOnce(), 170_000, 'building the frontend'),
      withTimeout(startSmtpCatcher(), WAIT_MS, 'starting the SMTP catcher'),
      launchChromium(SAME_SITE_CHROMIUM_ARGS),
      // PostgreSQL when installed (the backup test needs pg_dump), else PGlite.
      withTimeout(startPostgres(), 60_000, 'starting PostgreSQL'),
    ])
    smtp = catcher
    browser = browserUp
    postgres = pgUp
    port = await freePort()
    const [apiPort, modalPort, httpPort] = [await freePort(), await freePort(), await freePort()]
    const connectorPort = await freePort()

    env = {
      ...(postgres
        ? { DATABASE_URL: await postgres.createDatabase() }
        : { LATCH_DATA_DIR: join(dir, 'data') }),
      NODE_ENV: 'production',
      LATCH_SECRET: SECRET,
      LATCH_PUBLIC_URL: origin('api'),
      LATCH_MODAL_ORIGIN: origin('auth'),
      LATCH_CONNECTOR_ORIGIN: origin('connect'),
      LATCH_CONNECTOR_PORT: String(connectorPort),
      LATCH_TRUST_PROXY: '1',
      SMTP_URL: smtp.url,
      LATCH_API_PORT: String(apiPort),
      LATCH_MODAL_PORT: String(modalPort),
      LATCH_MODAL_DIR: dirs.modal,
      LATCH_SDK_DIR: dirs.sdk,
      LATCH_WALLET_FRAME_DIR: dirs.walletFrame,
    }
    const io = { out: () => {}, err: (t: string) => console.error(t), env }
    expect(await runCli(['migrate'], io)).toBe(0)
    let created = ''
    expect(
      await runCli(
        [
          'apps',
          'create',
          '--name',
          'Production guide',
          '--origin',
          origin('www'),
          '--login-methods',
          'email',
          '--create-on-login',
          'off',
          '--require-passcode',
          'off',
          '--json',
        ],
        {
          ...io,
          out: (t) => {
            created += t
          },
        },
      ),
    ).toBe(0)
    app = JSON.parse(created) as ServerAppConfig
    // The host page runs under the policy `latch csp` prints for the app (the whole header: the
    // demo page loads nothing from elsewhere; its own inline <style> is refused, which leaves
    // it unstyled and shows Latch needs nothing more than the printed lines).
    let printed = ''
    expect(
      await runCli(['csp', '--app', app.id], {
        ...io,
        out: (t) => {
          printed += `${t}\n`
        },
      }),
    ).toBe(0)
    hostCsp = /^Content-Security-Policy: (.+)$/m.exec(printed)?.[1] ?? ''
    expect(hostCsp).toContain(`frame-src ${origin('auth')}`)

    const serving = startLatch(env)
    // Awaited once nginx is started; this only keeps an early failure from going unhandled.
    serving.catch(() => {})

    host = await startHostServer({ modalUrl: origin('auth'), appId: app.id, port: 0, csp: hostCsp })

    // The guide's configuration with the test's names, ports and certificate.
    const tls = testCertificate()
    writeFileSync(join(dir, 'cert.pem'), tls.cert)
    writeFileSync(join(dir, 'key.pem'), tls.key)
    let site = guideNginxConfig()
      .replaceAll('example.com', 'example.test')
      .replaceAll('/etc/ssl/latch/fullchain.pem', join(dir, 'cert.pem'))
      .replaceAll('/etc/ssl/latch/privkey.pem', join(dir, 'key.pem'))
      .replaceAll('127.0.0.1:8787', `127.0.0.1:${apiPort}`)
      .replaceAll('127.0.0.1:8788', `127.0.0.1:${modalPort}`)
      .replaceAll('127.0.0.1:8789', `127.0.0.1:${connectorPort}`)
      .replaceAll('listen 443 ssl;', `listen 127.0.0.1:${port} ssl;`)
      .replaceAll('listen 80;', `listen 127.0.0.1:${httpPort};`)
    const [major = 0, minor = 0, patch = 0] = nginxVersion(NGINX ?? '')
    if (major * 1e6 + minor * 1e3 + patch < 1_025_001) {
      // What the guide says to do on nginx before 1.25.1 (Debian 12 ships 1.22).
      site = site
        .replaceAll(/\n\s*http2 on;/g, '')
        .replaceAll(`listen 127.0.0.1:${port} ssl;`, `listen 127.0.0.1:${port} ssl http2;`)
    }
    for (const temp of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
      mkdirSync(join(dir, temp), { mode: 0o777 })
      chmodSync(join(dir, temp), 0o777)
    }
    const conf = join(dir, 'nginx.conf')
    writeFileSync(
      conf,
      [
        `pid ${join(dir, 'nginx.pid')};`,
        `error_log ${join(dir, 'error.log')} warn;`,
        'events {}',
        'http {',
        '  access_log off;',
        `  client_body_temp_path ${join(dir, 'body')};`,
        `  proxy_temp_path ${join(dir, 'proxy')};`,
        `  fastcgi_temp_path ${join(dir, 'fastcgi')};`,
        `  uwsgi_temp_path ${join(dir, 'uwsgi')};`,
        `  scgi_temp_path ${join(dir, 'scgi')};`,
        site,
        // The host page is the operator's own site; the test serves it through the same nginx.
        `  server { listen 127.0.0.1:${port} ssl; server_name www.example.test;`,
        `    ssl_certificate ${join(dir, 'cert.pem')}; ssl_certificate_key ${join(dir, 'key.pem')};`,
        `    location / { proxy_pass http://127.0.0.1:${host.port}; proxy_set_header Host $host; } }`,
        '}',
      ].join('\n'),
    )
    nginx = spawn(NGINX ?? 'nginx', ['-p', dir, '-c', conf, '-g', 'daemon off;'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let nginxErr = ''
    nginx.stderr?.on('data', (d: Buffer) => {
      nginxErr += d.toString()
    })
    await serving
    // nginx is up once the API answers through it.
    await withTimeout(
      (async () => {
        for (;;) {
          if (nginx?.exitCode !== null) throw new Error(`nginx exited: ${nginxErr}`)
          if (await listening(port)) return
          await new Promise((r) => setTimeout(r, 100))
        }
      })(),
      WAIT_MS,
      'nginx listening',
    )
  }, 240_000)

  afterAll(async () => {
    process.off('exit', kill)
    await browser?.close()
    await stopLatch().catch(() => latch?.kill('SIGKILL'))
    nginx?.kill('SIGTERM')
    await host?.close()
    await smtp?.close()
    await postgres?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  }, 60_000)

  test('behavior: through nginx, a visitor signs in by e-mail code, creates a wallet and signs a message with it', async () => {
    const context = await browser.newContext()
    try {
      const hp = await openPage(context)
      const email = `guide-${Date.now()}@example.com`
      await signIn(hp, email)

      const created = walletCall<WalletAccount>(hp.page, 'createWallet')
      await visit(hp, SCREENS.created)
      const wallet = expectOk(await settle(created, 'createWallet()'))
      visitor = { email, address: wallet.address }

      const message = 'signed through the production guide'
      const signature = await signThroughScreen(hp, message)
      expect(await recoverMessageAddress({ message, signature })).toBe(wallet.address)

      // Both origins answer their probes through the proxy.
      for (const sub of ['auth', 'api']) {
        const probe = await context.newPage()
        const answer = await probe.goto(`${origin(sub)}/readyz`)
        expect([sub, answer?.status(), await answer?.json()]).toEqual([
          sub,
          200,
          { status: 'ready' },
        ])
        await probe.close()
      }
      // The connector origin serves Coinbase Wallet's frame through the proxy, for the modal.
      const frame = await context.newPage()
      const answer = await frame.goto(`${origin('connect')}/coinbase.html?app=${app.id}`)
      expect(answer?.status()).toBe(200)
      expect(answer?.headers()['content-security-policy']).toContain(
        `frame-ancestors ${origin('auth')} ${origin('www')}`,
      )
      await frame.close()
    } finally {
      await context.close()
    }
  }, 120_000)

  test('behavior: a pg_dump backup restored into a new database serves the visitor again: they sign in on a new device, the wallet recovers and signs', async (ctx) => {
    if (!postgres) {
      console.warn('[production.spec] backup test skipped: no PostgreSQL binaries')
      ctx.skip()
      return
    }
    if (!visitor) throw new Error('the first test made no wallet')
    const { email, address } = visitor
    // The guide's backup and restore commands.
    const dump = join(dir, 'latch.dump')
    const restored = await postgres.createDatabase()
    const run = (binary: string, args: string[]) => {
      const result = spawnSync(join(POSTGRES_BIN, binary), args, {
        encoding: 'utf8',
        timeout: 60_000,
      })
      if (result.status !== 0) throw new Error(`${binary} failed: ${result.stderr}`)
    }
    run('pg_dump', ['-Fc', '-f', dump, env.DATABASE_URL ?? ''])
    run('pg_restore', ['--no-owner', '-d', restored, dump])

    // The old process drains and exits 0 on SIGTERM; the new one serves the restored copy with
    // the same secret, and says its schema is current (no --migrate).
    expect(await stopLatch()).toBe(0)
    await startLatch({ ...env, DATABASE_URL: restored })

    const context = await browser.newContext()
    try {
      const hp = await openPage(context)
      await signIn(hp, email)
      const recovered = expectOk(
        await settle(walletCall<WalletAccount>(hp.page, 'recoverWallet'), 'recoverWallet()'),
      )
      expect(recovered.address).toBe(address)
      const message = 'signed after the restore'
      const signature = await signThroughScreen(hp, message)
      expect(await recoverMessageAddress({ message, signature })).toBe(address)
    } finally {
      await context.close()
    }
  }, 120_000)
})
