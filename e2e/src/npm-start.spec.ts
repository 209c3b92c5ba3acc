import { type ChildProcess, spawn } from 'node:child_process'
import { createHmac, randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import { encodeFunctionData, erc20Abi, type Hex, recoverMessageAddress } from 'viem'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { virtualAuthenticator } from './authenticator.ts'
import { expectAccessible } from './axe.ts'
import {
  demoUser,
  enterCode,
  newEmail,
  newPhone,
  openSection,
  screen,
  submitEmail,
  submitPhone,
  visit,
} from './flows.ts'
import { freePort, launchChromium, WAIT_MS, withTimeout } from './harness.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

interface Started {
  child: ChildProcess
  output: () => string
  exited: Promise<number | null>
}

/**
 * Runs what `npm start` runs (`node --import tsx scripts/start.ts`: one process, so Ctrl-C reaches
 * it directly; the tsx CLI's relay force-kills a child that does not confirm a signal within
 * 30 ms, which a busy machine misses), on ports and a data folder of this test.
 */
function start(env: Record<string, string>): Started {
  let output = ''
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env, NODE_ENV: 'development' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  )
  return { child, output: () => output, exited }
}

async function waitForOutput(s: Started, pattern: RegExp, ms: number): Promise<RegExpExecArray> {
  const deadline = Date.now() + ms
  for (;;) {
    const match = pattern.exec(s.output())
    if (match) return match
    if (Date.now() > deadline || s.child.exitCode !== null) {
      throw new Error(`no ${pattern} in the output of npm start:\n${s.output()}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** What `npm start` printed for its demo page, on the ports it ran on. */
interface Running {
  started: Started
  ports: { api: number; modal: number; host: number; connector: number }
  demoUrl: string
}

const START_ATTEMPTS = 3

/**
 * `npm start` on four free ports (the connector origin's too). The ports are free when picked
 * but `npm start` binds them only after building the frontend; another suite running beside
 * this one (the e2e specs share the machine's workers) may take one meanwhile. Such a start fails with EADDRINUSE; it is
 * retried on new ports, up to START_ATTEMPTS times. Any other failure fails the test.
 */
async function startOnFreePorts(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<Running> {
  for (let attempt = 1; ; attempt++) {
    const ports = {
      api: await freePort(),
      modal: await freePort(),
      host: await freePort(),
      connector: await freePort(),
    }
    const started = start({
      LATCH_API_PORT: String(ports.api),
      LATCH_MODAL_PORT: String(ports.modal),
      LATCH_HOST_PORT: String(ports.host),
      LATCH_CONNECTOR_PORT: String(ports.connector),
      LATCH_DATA_DIR: dataDir,
      ...env,
    })
    running.push(started)
    try {
      const [, demoUrl] = await waitForOutput(started, /Open (http:\/\/localhost:\d+\/) /, 150_000)
      return { started, ports, demoUrl: demoUrl as string }
    } catch (error) {
      const taken = /EADDRINUSE/.test(started.output())
      if (started.child.exitCode === null) started.child.kill('SIGKILL')
      if (!taken || attempt === START_ATTEMPTS) throw error
    }
  }
}

async function stop(s: Started): Promise<number | null> {
  s.child.kill('SIGINT')
  return withTimeout(s.exited, 15_000, 'npm start stopping on SIGINT')
}

let browser: Browser | undefined
let dataDir = ''
const running: Started[] = []

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'latch-start-'))
  browser = await launchChromium()
})

afterAll(async () => {
  // SIGINT first, so a start left running by a failure stops its anvil too.
  for (const s of running) {
    if (s.child.exitCode === null) await stop(s).catch(() => s.child.kill('SIGKILL'))
  }
  await browser?.close()
  await rm(dataDir, { recursive: true, force: true })
})

/** One JSON-RPC call to the demo's anvil, as any client of the chain would make it. */
async function chainCall<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(WAIT_MS),
  })
  return ((await res.json()) as { result: T }).result
}

const balanceOf = async (chain: string, address: string) =>
  BigInt(await chainCall<string>(chain, 'eth_getBalance', [address, 'latest']))

/** The demo page's 'Last result' once it starts with `label: `; the rest of it. */
async function result(page: Page, label: string): Promise<string> {
  const status = page.getByTestId('status')
  await expect
    .poll(() => status.textContent(), { timeout: 2 * WAIT_MS })
    .toMatch(new RegExp(`^${label}( failed)?: `))
  const text = (await status.textContent()) ?? ''
  expect(text.startsWith(`${label} failed`), text).toBe(false)
  return text.slice(label.length + 2)
}

/**
 * A `wallet.created` delivery for `address` that Latch did not send: unsigned, or signed as the
 * Standard Webhooks scheme says under a secret that is not the demo endpoint's.
 */
function forgedWalletCreated(url: string, address: string, secret?: string): Promise<Response> {
  const id = `msg_${randomBytes(8).toString('hex')}`
  const timestamp = Math.floor(Date.now() / 1000)
  const body = JSON.stringify({
    type: 'wallet.created',
    timestamp: new Date().toISOString(),
    data: { wallet: { type: 'wallet', address, walletClient: 'latch' } },
  })
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (secret) {
    const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
    const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')
    Object.assign(headers, {
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': `v1,${mac}`,
    })
  }
  return fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(WAIT_MS) })
}

const ETHER = 10n ** 18n
const SEND = 'EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN'
const SIGN = 'EMBEDDED_WALLET_SIGN_REQUEST_SCREEN'

test('behavior: npm start serves the demo, a person signs in with the code from the log, creates a wallet the demo funds on its anvil and sends from it, then, holding no ETH, approves and transfers the demo token in one batch the demo app pays for, Ctrl-C stops it and anvil; the demo app is kept, and without a chain the page says send needs one; there a visitor signs up with a passkey and signs in by SMS', async () => {
  const { started: first, ports, demoUrl } = await startOnFreePorts(dataDir)
  const { api, modal, host } = ports
  expect(demoUrl).toBe(`http://localhost:${host}/`)
  const [, appId] = await waitForOutput(first, /demo app\s+(\S{25}) /, 1000)
  const [, chain] = await waitForOutput(first, /chain\s+(http:\/\/127\.0\.0\.1:\d+) \(anvil/, 1000)
  const [, funder] = await waitForOutput(first, /funder\s+(http:\/\/127\.0\.0\.1:\d+\/\S+) /, 1000)
  const [, sponsor, token] = await waitForOutput(
    first,
    /sponsor\s+(0x[0-9a-fA-F]{40}) pays .* demo token (0x[0-9a-fA-F]{40})/,
    1000,
  )
  if (!chain || !funder || !sponsor || !token)
    throw new Error('no chain, funder or sponsor in the log')
  // Only Latch's signed webhook makes the demo pay: a forged one is refused, nothing is paid.
  const stranger = '0x000000000000000000000000000000000000dEaD'
  for (const secret of [undefined, `whsec_${randomBytes(32).toString('base64')}`]) {
    expect((await forgedWalletCreated(funder, stranger, secret)).status).toBe(401)
  }
  expect(await balanceOf(chain, stranger)).toBe(0n)
  // The wallet frame is built too: its page answers with its CSP instead of 503.
  const frame = await fetch(`http://127.0.0.1:${api}/apps/${appId}/embedded-wallets`, {
    signal: AbortSignal.timeout(WAIT_MS),
  })
  expect(frame.status).toBe(200)
  expect(frame.headers.get('content-security-policy')).toContain(
    `frame-ancestors http://localhost:${modal} http://localhost:${host}`,
  )

  const context = await browser?.newContext()
  if (!context) throw new Error('no browser')
  context.setDefaultTimeout(WAIT_MS)
  const page = await context.newPage()
  await page.goto(demoUrl as string)
  const modalFrame = page.frameLocator('[data-testid="latch-frame"]')
  await expectAccessible(page, 'the demo page of npm start')
  await page.getByTestId('sign-in').click()
  await visit({ page, modal: modalFrame }, 'LANDING')
  const email = newEmail('person')
  // Wallet login is on (the server default), listed first: the e-mail section opens on a click.
  await openSection(modalFrame, 'email')
  await submitEmail(modalFrame, email)
  // No SMTP_URL: the server prints the code to the log.
  const escaped = email.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const [, code] = await waitForOutput(first, new RegExp(`${escaped}\\D*(\\d{6})`), WAIT_MS)
  await enterCode(modalFrame, code as string)
  await demoUser(page, (u) => u?.email?.address === email)

  // The page's buttons: a new wallet, funded by the demo on its chain, sends 0.001 ETH.
  expect(await page.getByTestId('chain').textContent()).toContain('local chain on this machine')
  await page.getByTestId('create-wallet').click()
  const { address } = JSON.parse(await result(page, 'create wallet')) as { address: string }
  await expect.poll(() => balanceOf(chain, address), { timeout: 2 * WAIT_MS }).toBe(ETHER)
  await page.getByTestId('provider').click()
  expect(JSON.parse(await result(page, 'provider'))).toEqual({
    accounts: [address],
    chainId: '0x1',
    balance: '1 ETH',
  })
  await page.getByTestId('send-transaction').click()
  const hp = { page, modal: modalFrame }
  await visit(hp, SEND)
  const send = screen(modalFrame, SEND)
  const button = send.getByRole('button', { name: 'Send ETH' })
  await expect.poll(() => button.isEnabled(), { timeout: WAIT_MS }).toBe(true)
  await button.click()
  await send.getByRole('heading', { name: 'Transaction complete!' }).waitFor()
  await send.getByRole('button', { name: 'All Done' }).click()
  const receipt = JSON.parse(await result(page, 'send transaction')) as {
    status: number
    transactionHash: string
    from: string
  }
  expect(receipt.status).toBe(1)
  expect(receipt.from.toLowerCase()).toBe(address.toLowerCase())
  const onChain = await chainCall<{ status: string }>(chain, 'eth_getTransactionReceipt', [
    receipt.transactionHash,
  ])
  expect(onChain.status).toBe('0x1')
  // More of the page's buttons, each answering in the live region: the wallet is usable here
  // (recover answers at once), a message is signed by it, and a kind the app does not enable
  // is refused there with its error.
  await page.getByTestId('recover-wallet').click()
  expect(JSON.parse(await result(page, 'recover wallet'))).toMatchObject({ address })
  await page.getByTestId('sign-message').click()
  await visit(hp, SIGN)
  await screen(modalFrame, SIGN).getByRole('button', { name: 'Sign and continue' }).click()
  const signature = (await result(page, 'sign message')) as Hex
  const message = 'Hello from the Latch demo'
  expect((await recoverMessageAddress({ message, signature })).toLowerCase()).toBe(
    address.toLowerCase(),
  )
  // The batch the app pays for: the wallet emptied of ETH (as a new one elsewhere would be)
  // approves and transfers the demo token in one batch through the wallet frame's review.
  await chainCall(chain, 'anvil_setBalance', [address, '0x0'])
  expect(await balanceOf(chain, address)).toBe(0n)
  const readToken = async (data: Hex) =>
    BigInt(await chainCall<string>(chain, 'eth_call', [{ to: token, data }, 'latest']))
  const tokensOf = (who: Hex) =>
    readToken(encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [who] }))
  const wallet = address as Hex
  const demoRecipient = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
  await expect.poll(() => tokensOf(wallet), { timeout: WAIT_MS }).toBe(100n)
  expect(await page.getByTestId('chain').textContent()).toContain('network fee the app pays')
  await page.getByTestId('send-batch').click()
  await visit(hp, SEND)
  const confirm = modalFrame
    .frameLocator('[data-testid="latch-wallet-frame"]')
    .getByTestId('wallet-batch-confirm')
  await confirm.waitFor({ state: 'visible', timeout: WAIT_MS })
  await confirm.scrollIntoViewIfNeeded()
  await expect.poll(() => confirm.getAttribute('aria-disabled'), { timeout: WAIT_MS }).toBeNull()
  await confirm.click()
  const batch = JSON.parse(await result(page, 'batch')) as { status: number; transactionHash: Hex }
  expect(batch.status).toBe(200)
  const batchReceipt = await chainCall<{ status: string; from: string; to: string }>(
    chain,
    'eth_getTransactionReceipt',
    [batch.transactionHash],
  )
  expect(batchReceipt.status).toBe('0x1')
  // Sent by the sponsor to the wallet's own address (its delegated code runs the batch).
  expect(batchReceipt.from.toLowerCase()).toBe(sponsor.toLowerCase())
  expect(batchReceipt.to.toLowerCase()).toBe(wallet.toLowerCase())
  expect(await tokensOf(wallet)).toBe(99n)
  expect(await tokensOf(demoRecipient)).toBe(1n)
  expect(
    await readToken(
      encodeFunctionData({
        abi: erc20Abi,
        functionName: 'allowance',
        args: [wallet, demoRecipient],
      }),
    ),
  ).toBe(10n)
  expect(await balanceOf(chain, address)).toBe(0n)
  await page.getByTestId('link-google').click()
  await expect
    .poll(() => page.getByTestId('status').textContent(), { timeout: WAIT_MS })
    .toMatch(/^link google failed: method_not_available: /)
  await expectAccessible(page, 'the demo page of npm start with results')
  await context.close()

  expect(await stop(first)).toBe(0)
  expect(first.output()).toContain('SIGINT: stopping')
  // anvil stopped with it.
  await expect(chainCall(chain, 'eth_chainId', [])).rejects.toThrow()

  // The next start finds the same demo app in the data folder (kept current with the demo
  // page's origin, should the ports differ). Without a chain it runs, and its page says Send
  // needs one.
  const again = await startOnFreePorts(dataDir, { LATCH_DEMO_CHAIN: 'off' })
  const second = again.started
  const [, appIdAgain] = await waitForOutput(second, /demo app\s+(\S{25}) /, 1000)
  expect(appIdAgain).toBe(appId)
  expect(second.output()).toContain('send needs a chain')
  expect(second.output()).not.toMatch(/funder\s+http/)
  const plain = await browser?.newPage()
  if (!plain) throw new Error('no browser')
  await plain.goto(again.demoUrl)
  await expect
    .poll(() => plain.getByTestId('chain').textContent(), { timeout: WAIT_MS })
    .toMatch(/^Send needs a chain: /)
  await expectAccessible(plain, 'the demo page of npm start without a chain')
  await plain.close()

  // Passkey sign-in: the modal is named localhost, which a passkey's RP ID can be.
  const keyed = await browser?.newContext()
  if (!keyed) throw new Error('no browser')
  keyed.setDefaultTimeout(WAIT_MS)
  const keyPage = await keyed.newPage()
  const device = await virtualAuthenticator(keyPage)
  await keyPage.goto(again.demoUrl)
  const keyModal = keyPage.frameLocator('[data-testid="latch-frame"]')
  await keyPage.getByTestId('sign-in').click()
  await visit({ page: keyPage, modal: keyModal }, 'LANDING')
  await keyModal.getByRole('button', { name: 'Use a passkey' }).click()
  await visit({ page: keyPage, modal: keyModal }, 'PASSKEY_SCREEN')
  await screen(keyModal, 'PASSKEY_SCREEN').getByRole('button', { name: 'Create a passkey' }).click()
  const byPasskey = await demoUser(keyPage, (u) =>
    Boolean(u?.linkedAccounts.some((a) => a.type === 'passkey')),
  )
  expect(byPasskey?.linkedAccounts.map((a) => a.type)).toEqual(['passkey'])
  expect((await device.credentials())[0]?.rpId).toBe('localhost')
  await keyed.close()

  // SMS sign-in: the page's setting shows the phone field (one code section at a time); no
  // Twilio settings, so the code is in the log.
  const texting = await browser?.newPage()
  if (!texting) throw new Error('no browser')
  await texting.goto(again.demoUrl)
  await texting.getByLabel('Sign in by code').selectOption('sms')
  await Promise.all([
    texting.waitForEvent('load'),
    texting.getByRole('button', { name: 'Apply' }).click(),
  ])
  const textModal = texting.frameLocator('[data-testid="latch-frame"]')
  await texting.getByTestId('sign-in').click()
  await visit({ page: texting, modal: textModal }, 'LANDING')
  await openSection(textModal, 'phone')
  const phone = newPhone()
  await submitPhone(textModal, phone.typed)
  const escapedPhone = phone.e164.replace('+', '\\+')
  const [, smsCode] = await waitForOutput(
    second,
    new RegExp(`SMS code for ${escapedPhone}: (\\d{6})`),
    WAIT_MS,
  )
  await enterCode(textModal, smsCode as string)
  await demoUser(texting, (u) => u?.phone?.number === phone.e164)
  await texting.close()
  expect(await stop(second)).toBe(0)
}, 300_000)
