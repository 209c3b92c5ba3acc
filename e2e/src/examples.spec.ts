/**
 * The examples as a developer runs them: examples/react-wagmi on a clean copy, following its
 * README (`.env`, `npm install` of @latch/react and @latch/wagmi from the tarballs the API
 * serves at /packages/, `npm run build`), and a copy of examples/html with the two values its
 * README names filled in, served by a static server, both on a page origin of their own
 * against the harness's API and modal and anvil as chain 1 (the app's RPC override). In
 * Chromium a visitor signs in by e-mail, creates the in-app wallet, signs a message that viem's
 * verifyMessage accepts and sends 0.01 ETH whose receipt waitForTransactionReceipt sees; the
 * React example also shows wagmi's own verification and its useWaitForTransactionReceipt, and,
 * with the app's sponsor on the chain, the same visitor, before holding any ETH, approves and
 * transfers an ERC-20 in one batch through wagmi's useSendCalls (useCapabilities says the app
 * pays). One visitor path per example: the suite's time is budgeted.
 */
import { execFile } from 'node:child_process'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, extname, join, normalize } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { ANVIL_ACCOUNTS, type RunningAnvil, startAnvil } from '@latch/server/testing'
import type { Page } from 'playwright-core'
import { createPublicClient, type Hex, http, parseEther, verifyMessage } from 'viem'
import { mainnet } from 'viem/chains'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { REACT_EXTERNAL } from '../../react/build.ts'
import { builtLibrary } from '../../scripts/build-library.ts'
import { packPackages } from '../../scripts/packages.ts'
import { WAGMI_EXTERNAL } from '../../wagmi/build.ts'
import { enterCode, newEmail, screen, submitEmail, visit, waitEmailCode } from './flows.ts'
import { freePort, type HostPage, WAIT_MS, withTimeout } from './harness.ts'
import { confirmBatch, type SponsoredChain, sponsoredChain } from './sponsored-chain.ts'
import { useHarness } from './use-harness.ts'

const run = promisify(execFile)

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const EXAMPLES = join(ROOT, 'examples')
const SIGN = 'EMBEDDED_WALLET_SIGN_REQUEST_SCREEN'
const SEND = 'EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN'
const RECIPIENT = ANVIL_ACCOUNTS[2].address as Hex

/** Where the packages the API serves are packed (the harness's LATCH_PACKAGES_DIR). */
const PACKAGES = join(ROOT, 'node_modules/.cache', `latch-packages-${process.pid}`)
const h = useHarness({ serverEnv: { LATCH_PACKAGES_DIR: PACKAGES } })
let anvil: RunningAnvil
let site: { origin: string; server: Server }
/** The clean copies of the examples, removed after the file (React's node_modules is large). */
let work = ''
let appId = ''
let sponsored: SponsoredChain

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
}

/** Serves the React build at / and the plain page's copy at /html/. */
async function serveExamples(port: number, dist: string, htmlDir: string) {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    const file =
      path === '/html/'
        ? join(htmlDir, 'index.html')
        : join(dist, normalize(path === '/' ? '/index.html' : path))
    if (!file.startsWith(dist) && !file.startsWith(htmlDir)) return void res.writeHead(404).end()
    readFile(file, 'utf8').then(
      (body) => {
        res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' })
        res.end(body)
      },
      () => res.writeHead(404).end(),
    )
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  return server
}

/**
 * Multicall3 at its address on every public chain, which a fresh anvil lacks: wagmi batches reads
 * (useBalance) through it. viem keeps its creation code for deployless calls but does not export
 * it; running that code answers the runtime code, which anvil_setCode puts in place.
 */
async function deployMulticall3(node: RunningAnvil) {
  const viemDir = dirname(createRequire(import.meta.url).resolve('viem/package.json'))
  const source = await readFile(join(viemDir, '_esm/constants/contracts.js'), 'utf8')
  const creation = /multicall3Bytecode = '(0x[0-9a-f]+)'/.exec(source)?.[1]
  if (!creation) throw new Error('viem no longer holds multicall3Bytecode')
  const runtime = await node.rpc<Hex>('eth_call', [{ data: creation }, 'latest'])
  const address = mainnet.contracts.multicall3.address
  await node.rpc('anvil_setCode', [address, runtime])
}

/** The placeholders of the examples' READMEs and env files. */
const README_API = 'https://api.example.com'

/** The commands of a README's first `sh` block, comments left out. */
async function readmeCommands(example: string): Promise<string[]> {
  const readme = await readFile(join(EXAMPLES, example, 'README.md'), 'utf8')
  const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1]
  if (!block) throw new Error(`examples/${example}/README.md has no sh block`)
  return block
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter(Boolean)
}

/** A child's environment without the npm variables of the `npm test` that runs this file. */
const childEnv = () =>
  Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)))

/** Runs a README command in `cwd`, bounded, failing with what it printed. */
async function readmeStep(cwd: string, command: string, args: string[], ms: number) {
  const line = [command, ...args].join(' ')
  return run(command, args, {
    cwd,
    env: childEnv(),
    timeout: ms,
    maxBuffer: 32 * 1024 * 1024,
  }).catch((e: { stdout?: string; stderr?: string; killed?: boolean; message: string }) => {
    const why = e.killed ? `did not finish within ${ms / 1000} s` : 'failed'
    throw new Error(
      `examples/react-wagmi's README step \`${line}\` ${why} in ${cwd}:\n${e.stderr || e.stdout || e.message}`,
    )
  })
}

/**
 * examples/react-wagmi as its README says, on a clean copy outside this repository (nothing of
 * its node_modules to fall back on): `cp .env.example .env`, then the README's `npm install` of
 * @latch/react and @latch/wagmi from the tarballs the API serves (the README's API origin
 * replaced by the harness's). npm resolves the rest from the cache the repository's own install
 * filled (`--prefer-offline`), within its bound. `builtExample` fills in `.env` and builds.
 */
async function installedExample(): Promise<string> {
  const commands = await readmeCommands('react-wagmi')
  const version = JSON.parse(await readFile(join(ROOT, 'react/package.json'), 'utf8')).version
  const tarball = (name: string) => `${README_API}/packages/latch-${name}-${version}.tgz`
  expect(commands).toEqual([
    'cp .env.example .env',
    `npm install ${tarball('react')} ${tarball('wagmi')}`,
    'npm run dev',
  ])
  expect(await readFile(join(EXAMPLES, 'react-wagmi/README.md'), 'utf8')).toContain(
    '`npm run build`',
  )
  const project = join(work, 'react-wagmi')
  await cp(join(EXAMPLES, 'react-wagmi'), project, {
    recursive: true,
    filter: (src) => !/[\\/](node_modules|dist|\.env)$/.test(src),
  })
  await cp(join(project, '.env.example'), join(project, '.env'))
  const install = (commands[1] ?? '').split(' ').slice(2)
  await readmeStep(
    project,
    'npm',
    [
      'install',
      ...install.map((url) => url.replace(README_API, h().apiDirectUrl)),
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
    ],
    300_000,
  )
  const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8'))
  expect(manifest.dependencies['@latch/react']).toBe(
    `${h().apiDirectUrl}/packages/latch-react-${version}.tgz`,
  )
  return project
}

/**
 * The installed example with its `.env` values filled in (the app, the modal, the chain: made
 * while npm installed), then `npm run build`, the README's deployable site, in place of its dev
 * server: the production build an integrator deploys, within its bound.
 */
async function builtExample(project: string, env: Record<string, string>): Promise<string> {
  const dotenv = await readFile(join(project, '.env'), 'utf8')
  await writeFile(
    join(project, '.env'),
    dotenv.replace(/^(VITE_[A-Z_]+)=.*$/gm, (line, key: string) =>
      key in env ? `${key}=${env[key]}` : line,
    ),
  )
  await readmeStep(project, 'npm', ['run', 'build', '--', '--logLevel', 'error'], 180_000)
  return join(project, 'dist')
}

/**
 * examples/html as its README says: a copy whose script `src` names the modal origin's
 * /sdk.js and whose `data-app-id` is the app's, served by a static server.
 */
async function plainPageExample(modalUrl: string, app: string): Promise<string> {
  const dir = join(work, 'html')
  await cp(join(EXAMPLES, 'html'), dir, { recursive: true })
  const page = await readFile(join(dir, 'index.html'), 'utf8')
  expect(page).toContain('src="https://auth.example.com/sdk.js"')
  expect(page).toContain('data-app-id="YOUR_25_CHARACTER_APP_ID"')
  await writeFile(
    join(dir, 'index.html'),
    page.replaceAll('https://auth.example.com', modalUrl).replace('YOUR_25_CHARACTER_APP_ID', app),
  )
  return dir
}

/**
 * @latch/react and @latch/wagmi as `npm run build` builds them (that build's dist/ when it is
 * provably current, as after CI's `npm run build`; else built here), packed where the API
 * serves them.
 */
async function packedPackages(): Promise<void> {
  await Promise.all([
    builtLibrary({ name: 'react', external: REACT_EXTERNAL }),
    builtLibrary({ name: 'wagmi', external: WAGMI_EXTERNAL }),
  ])
  const packed = await packPackages(PACKAGES, ['@latch/react', '@latch/wagmi'])
  expect(packed.map((p) => p.name).sort()).toEqual(['@latch/react', '@latch/wagmi'])
}

beforeAll(async () => {
  const port = await freePort()
  // localhost: cross-site with the modal and API on 127.0.0.1, as in production.
  const origin = `http://localhost:${port}`
  work = await mkdtemp(join(tmpdir(), 'latch-examples-'))
  // The chain and the app while the packages are packed and installed: npm needs neither.
  const [project, app] = await Promise.all([
    (async () => {
      await withTimeout(
        packedPackages(),
        180_000,
        'building and packing @latch/react and @latch/wagmi',
      )
      return installedExample()
    })(),
    (async () => {
      anvil = await startAnvil({ chainId: 1, hardfork: 'prague' })
      await deployMulticall3(anvil)
      const created = await h().createApp({
        allowedOrigins: [origin],
        embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: false },
        rpcUrls: { '1': anvil.url },
      })
      sponsored = await sponsoredChain(anvil, h().api.deps, created.id)
      return created
    })(),
  ])
  appId = app.id
  const dist = await builtExample(project, {
    VITE_LATCH_APP_ID: appId,
    VITE_LATCH_MODAL_URL: h().modalUrl,
    VITE_RPC_URL: anvil.url,
    VITE_TOKEN_ADDRESS: sponsored.token,
  })
  const html = await plainPageExample(h().modalUrl, appId)
  site = { origin, server: await serveExamples(port, dist, html) }
}, 600_000)

afterAll(async () => {
  // Each part only if it started: a failed beforeAll leaves the later ones unset.
  if (site) await new Promise((resolve) => site.server.close(resolve))
  if (work) await rm(work, { recursive: true, force: true })
  await rm(PACKAGES, { recursive: true, force: true })
  await anvil?.stop()
})

const chain = () => createPublicClient({ chain: mainnet, transport: http(anvil.url) })

/** A page of the examples' site in a fresh context (closed after the test by the harness). */
const openExample = (path: string) => h().open({ origin: site.origin, path, waitReady: false })

/** The sign-in screens after the page's own Sign in button. */
async function signIn(hp: HostPage, email: string) {
  await hp.page.getByRole('button', { name: 'Sign in' }).click()
  await visit(hp, 'LANDING')
  await submitEmail(hp.modal, email)
  const code = await waitEmailCode(h(), email)
  await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
  await enterCode(hp.modal, code)
}

async function fund(address: Hex) {
  const hash = await anvil.rpc<string>('eth_sendTransaction', [
    { from: ANVIL_ACCOUNTS[0].address, to: address, value: `0x${parseEther('1').toString(16)}` },
  ])
  expect((await anvil.receipt(hash)).status).toBe('0x1')
}

/** The modal's dialog closed: until then the page under it is inert (showModal). */
const dialogClosed = (hp: HostPage) =>
  hp.page.waitForFunction(
    () => document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === false,
    undefined,
    { timeout: WAIT_MS },
  )

async function approveSignature(hp: HostPage) {
  await visit(hp, SIGN)
  await screen(hp.modal, SIGN).getByRole('button', { name: 'Sign and continue' }).click()
  await dialogClosed(hp)
}

async function approveSend(hp: HostPage) {
  await visit(hp, SEND)
  const send = screen(hp.modal, SEND)
  const button = send.getByRole('button', { name: 'Send ETH' })
  await expect.poll(() => button.isEnabled(), { timeout: WAIT_MS }).toBe(true)
  await button.click()
  await send.getByRole('heading', { name: 'Transaction complete!' }).waitFor({ timeout: WAIT_MS })
  await send.getByRole('button', { name: 'All Done' }).click()
  await dialogClosed(hp)
}

const text = (page: Page, testId: string) =>
  page
    .getByTestId(testId)
    .textContent({ timeout: WAIT_MS })
    .then((t) => t ?? '')

test('behavior: examples/react-wagmi: sign in with LatchLoginButton, create the wallet with useWallet, wagmi connects through the latch connector and signs (wagmi and viem verify); holding 0 ETH, the visitor approves and transfers an ERC-20 in one batch through wagmi’s useSendCalls (useCapabilities says the app pays; the wallet frame’s review is confirmed, useWaitForCallsStatus sees success, the app’s sponsor paid the gas); funded, wagmi reads the balance and sends (useWaitForTransactionReceipt sees it)', async () => {
  const hp = await openExample('/')
  const email = newEmail('react-example')
  await signIn(hp, email)
  await expect.poll(() => text(hp.page, 'signed-in'), { timeout: WAIT_MS }).toContain(email)
  await hp.page.getByRole('button', { name: 'Create wallet' }).click()
  // Signing in and the new wallet connect wagmi by themselves (the provider's connect event).
  const address = (await text(hp.page, 'address')) as Hex
  expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/)
  // <LatchProvider> and the connector share one client: one modal frame on the page.
  expect(await hp.page.getByTestId('latch-frame').count()).toBe(1)

  // Signed first, while the account is the plain key the message is recovered to.
  await hp.page.getByRole('button', { name: 'Sign', exact: true }).click()
  await approveSignature(hp)
  const signature = (await text(hp.page, 'signature')) as Hex
  expect(await text(hp.page, 'verified')).toBe('valid')
  expect(await verifyMessage({ address, message: 'Hello from Latch', signature })).toBe(true)

  // The batch from a wallet that holds no ETH: the app's sponsor pays.
  await sponsored.mint(address, 100n)
  expect(await sponsored.balanceOf(address)).toBe(0n)
  const sponsorBefore = await sponsored.balanceOf(sponsored.sponsor)
  await expect
    .poll(() => text(hp.page, 'capabilities'), { timeout: WAIT_MS })
    .toBe('Batches: the app pays the network fee')
  // Filled once wagmi's account settled (a reconnect would render the section anew).
  const recipient = hp.page.getByLabel('Token recipient')
  await expect
    .poll(
      async () => {
        await recipient.fill(RECIPIENT)
        await new Promise((r) => setTimeout(r, 300))
        return recipient.inputValue()
      },
      { timeout: WAIT_MS },
    )
    .toBe(RECIPIENT)
  await hp.page.getByRole('button', { name: 'Approve and transfer in one batch' }).click()
  await confirmBatch(hp)
  await expect
    .poll(() => text(hp.page, 'batch-status'), { timeout: 2 * WAIT_MS })
    .toMatch(/^success in transaction 0x[0-9a-f]{64}$/)
  expect(await text(hp.page, 'batch-id')).toMatch(/^0x[0-9a-f]{64}$/)
  expect(await sponsored.tokensOf(address)).toBe(99n)
  expect(await sponsored.tokensOf(RECIPIENT)).toBe(1n)
  expect(await sponsored.allowance(address, RECIPIENT)).toBe(10n)
  expect(await sponsored.balanceOf(address)).toBe(0n)
  expect(await sponsored.balanceOf(sponsored.sponsor)).toBeLessThan(sponsorBefore)

  await fund(address)
  await expect.poll(() => text(hp.page, 'balance'), { timeout: WAIT_MS }).toBe('1 ETH')
  await hp.page.getByLabel('To', { exact: true }).fill(RECIPIENT)
  await hp.page.getByRole('button', { name: 'Send', exact: true }).click()
  await approveSend(hp)
  const hash = (await text(hp.page, 'tx-hash')) as Hex
  await expect
    .poll(() => text(hp.page, 'receipt'), { timeout: WAIT_MS })
    .toMatch(/^success in block \d+$/)
  const receipt = await chain().waitForTransactionReceipt({ hash, timeout: WAIT_MS })
  expect(receipt).toMatchObject({ status: 'success', to: RECIPIENT.toLowerCase() })
  expect(receipt.from.toLowerCase()).toBe(address.toLowerCase())
}, 120_000)

test('error: both examples on an origin the app does not list show origin_not_allowed with the origin and the command that adds it, within 3 s', async () => {
  // The same server by its address: an origin of its own, which the app does not list.
  const other = site.origin.replace('localhost', '127.0.0.1')
  const command = `npm run latch -- apps update ${appId} --add-origin ${other}`
  const react = await h().open({ origin: other, path: '/', waitReady: false })
  const alert = react.page.getByTestId('latch-error')
  await alert.waitFor({ timeout: 3000 })
  expect(await alert.textContent()).toBe(
    `origin_not_allowed: This origin is not allowed for this app: ${other}. Add it on the Latch server, then reload the page: ${command}`,
  )
  // The plain page in the same tab, as a visitor would go on to it.
  await react.page.goto(`${other}/html/`, { timeout: WAIT_MS })
  await expect
    .poll(() => text(react.page, 'result'), { timeout: 3000, interval: 100 })
    .toBe(
      `origin_not_allowed: This origin is not allowed for this app: ${other}. Add it on the Latch server, then reload the page: ${command}`,
    )
})

test('behavior: examples/html: the script tag’s Sign in button, then createWallet, signMessage (viem verifies) and sendTransaction (waitForTransactionReceipt sees it) from the page’s own script', async () => {
  const hp = await openExample('/html/')
  const email = newEmail('html-example')
  await signIn(hp, email)
  await expect.poll(() => text(hp.page, 'who'), { timeout: WAIT_MS }).toBe(`Signed in as ${email}`)
  await hp.page.getByRole('button', { name: 'Create wallet' }).click()
  await expect.poll(() => text(hp.page, 'result'), { timeout: WAIT_MS }).toMatch(/^Wallet 0x/)
  const address = (await text(hp.page, 'result')).slice('Wallet '.length) as Hex
  await fund(address)

  await hp.page.getByRole('button', { name: /^Sign “/ }).click()
  await approveSignature(hp)
  await expect
    .poll(() => text(hp.page, 'result'), { timeout: WAIT_MS })
    .toMatch(/^0x[0-9a-f]{130}$/)
  const signature = (await text(hp.page, 'result')) as Hex
  expect(await verifyMessage({ address, message: 'Hello from Latch', signature })).toBe(true)

  await hp.page.locator('#to').fill(RECIPIENT)
  await hp.page.getByRole('button', { name: 'Send', exact: true }).click()
  await approveSend(hp)
  await expect.poll(() => text(hp.page, 'result'), { timeout: WAIT_MS }).toMatch(/^Sent 0x/)
  const hash = (await text(hp.page, 'result')).slice('Sent '.length) as Hex
  const receipt = await chain().waitForTransactionReceipt({ hash, timeout: WAIT_MS })
  expect(receipt.status).toBe('success')
  expect(receipt.from.toLowerCase()).toBe(address.toLowerCase())
})
