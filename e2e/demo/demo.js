// The demo host page: shows the signed-in user and drives every call of the Latch SDK from a
// button, each result in the 'Last result' live region.
const userEl = document.querySelector('[data-testid="user"]')
const statusEl = document.querySelector('[data-testid="status"]')
const chainEl = document.querySelector('[data-testid="chain"]')
const batchEl = document.querySelector('[data-testid="send-batch"]')
const unlinkEl = document.getElementById('unlink-account')

/** 0.001 ETH, what 'Send' pays. */
const SEND_VALUE = '0x38d7ea4c68000'
const SIGN_TEXT = 'Hello from the Latch demo'
/** The batch: allow the recipient 10 demo tokens, and transfer it 1 (the token has no decimals). */
const BATCH_ALLOWANCE = 10n
const BATCH_TRANSFER = 1n
/** How long the batch's result waits for its block. */
const BATCH_STATUS_MS = 30_000

/** What `npm start` tells the page (host-server.ts); absent on the e2e specs' pages. */
function demoConfig() {
  const el = document.getElementById('demo-config')
  if (!el) return undefined
  try {
    return JSON.parse(el.textContent ?? '')
  } catch {
    return undefined
  }
}
const config = demoConfig()

function showChain() {
  // The batch needs the demo app's sponsor, which only npm start's chain has.
  if (!config?.chain?.token) batchEl.remove()
  if (!config) {
    chainEl.remove()
    return
  }
  const chain = config.chain
  chainEl.textContent = chain
    ? `Send uses a local chain on this machine (anvil, as ${chain.name}, chain ${chain.id}): each in-app wallet gets ${chain.funding} there a moment after it is created, and Send pays 0.001 ETH to ${chain.recipient}.`
    : 'Send needs a chain: npm start runs a local one when anvil is installed (npm install installs it), then restart npm start.'
  if (chain?.token) {
    chainEl.textContent += ` Each wallet also gets 100 demo tokens (${chain.token}); the batch button allows ${chain.recipient} ${BATCH_ALLOWANCE} of them and transfers it ${BATCH_TRANSFER}, in one batch whose network fee the app pays: it works from a wallet holding no ETH.`
  }
}

/** One 32-byte ABI word of an address or a whole number, as hex digits. */
const word = (value) =>
  (typeof value === 'bigint' ? value.toString(16) : value.slice(2).toLowerCase()).padStart(64, '0')

/** JSON that survives the bigints a receipt may carry. */
const json = (value) =>
  JSON.stringify(value ?? null, (_key, v) => (typeof v === 'bigint' ? v.toString() : v))

/** An account as unlink() takes it, and how the list names it. */
function unlinkTarget(account) {
  if (account.type === 'email')
    return [{ type: 'email', address: account.address }, account.address]
  if (account.type === 'phone') return [{ type: 'phone', number: account.number }, account.number]
  if (account.type === 'wallet') {
    // The in-app wallet cannot be unlinked.
    if (account.walletClient === 'latch') return null
    return [{ type: 'wallet', address: account.address }, `wallet ${account.address}`]
  }
  if (typeof account.subject === 'string') {
    const name = account.email ?? account.username ?? account.name ?? account.subject
    return [
      { type: account.type, subject: account.subject },
      `${account.type.replace('_oauth', '')} ${name}`,
    ]
  }
  return null
}

function showUnlinkable(user) {
  const options = (user?.linkedAccounts ?? []).map(unlinkTarget).filter(Boolean)
  unlinkEl.replaceChildren(
    ...options.map(([target, label]) => {
      const option = document.createElement('option')
      option.value = JSON.stringify(target)
      option.textContent = label
      return option
    }),
  )
}

function describe(error) {
  if (error && typeof error === 'object') {
    const code = 'code' in error ? `${error.code}: ` : ''
    const details = 'details' in error && error.details ? `. ${error.details}` : ''
    return `${code}${error.message}${details}`
  }
  return String(error)
}

function waitForLatch(timeoutMs) {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const tick = () => {
      if (window.latch) resolve(window.latch)
      else if (Date.now() - started > timeoutMs) reject(new Error('window.latch never appeared'))
      else setTimeout(tick, 20)
    }
    tick()
  })
}

async function main() {
  showChain()
  const latch = await waitForLatch(10_000)
  const showUser = async () => {
    const user = await latch.getUser()
    userEl.textContent = JSON.stringify(user, null, 2)
    showUnlinkable(user)
  }
  const report = (text) => {
    statusEl.textContent = text
  }
  const run = async (label, action) => {
    try {
      const result = await action()
      report(`${label}: ${typeof result === 'string' ? result : json(result)}`)
    } catch (error) {
      report(`${label} failed: ${describe(error)}`)
    }
    await showUser().catch(() => {})
  }

  // Every 'login' event's payload: after an OAuth return no login() promise is left to await.
  window.latchLogins = []
  latch.on('login', (result) => {
    window.latchLogins.push(result)
    report('login: ok')
    showUser().catch(() => {})
  })
  latch.on('user', () => showUser().catch(() => {}))
  latch.on('logout', () => showUser().catch(() => {}))

  const send = async () => {
    if (config && !config.chain) {
      throw new Error('Send needs a chain: install anvil and restart npm start')
    }
    const user = await latch.getUser()
    const to = config?.chain?.recipient ?? user?.wallet?.address
    const chainId = config?.chain?.id
    const receipt = await latch.sendTransaction({
      to,
      value: SEND_VALUE,
      ...(chainId ? { chainId } : {}),
    })
    const { status, transactionHash, blockNumber, from } = receipt
    return { status, transactionHash, blockNumber, from, to: receipt.to }
  }
  /** latch.sendCalls with the token's approve and transfer, then its status once in a block. */
  const batch = async () => {
    const chain = config?.chain
    if (!chain?.token) throw new Error('The batch needs the demo app’s sponsor: restart npm start')
    const { id } = await latch.sendCalls({
      version: '2.0.0',
      chainId: `0x${chain.id.toString(16)}`,
      atomicRequired: true,
      calls: [
        { to: chain.token, data: `0x095ea7b3${word(chain.recipient)}${word(BATCH_ALLOWANCE)}` },
        { to: chain.token, data: `0xa9059cbb${word(chain.recipient)}${word(BATCH_TRANSFER)}` },
      ],
    })
    const provider = await latch.getEthereumProvider()
    const started = Date.now()
    for (;;) {
      const status = await provider.request({ method: 'wallet_getCallsStatus', params: [id] })
      if (status.status !== 100) {
        return { id, status: status.status, transactionHash: status.receipts?.[0]?.transactionHash }
      }
      if (Date.now() - started > BATCH_STATUS_MS) return { id, status: status.status }
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
  }
  const askProvider = async () => {
    const provider = await latch.getEthereumProvider()
    const accounts = await provider.request({ method: 'eth_accounts' })
    const chainId = await provider.request({ method: 'eth_chainId' })
    if (!accounts.length) return { accounts, chainId }
    const wei = BigInt(
      await provider.request({ method: 'eth_getBalance', params: [accounts[0], 'latest'] }),
    )
    return { accounts, chainId, balance: `${Number(wei) / 1e18} ETH` }
  }
  const unlink = () => {
    if (!unlinkEl.value) throw new Error('No account to unlink: link one first')
    return latch.unlink(JSON.parse(unlinkEl.value))
  }

  const actions = {
    'link-email': () => run('link email', () => latch.link('email')),
    'link-phone': () => run('link phone', () => latch.link('phone')),
    token: () => run('access token', () => latch.getAccessToken()),
    logout: () => run('logout', () => latch.logout()),
    unlink: () => run('unlink', unlink),
    connect: () => run('connect wallet', () => latch.connectWallet()),
    fork: () => run('fork session', () => latch.forkSession()),
    'create-wallet': () => run('create wallet', () => latch.createWallet()),
    'recover-wallet': () => run('recover wallet', () => latch.recoverWallet()),
    sign: () => run('sign message', () => latch.signMessage(SIGN_TEXT)),
    send: () => run('send transaction', send),
    batch: () => run('batch', batch),
    export: () =>
      run('export wallet', async () => {
        await latch.exportWallet()
        return 'the key was shown, then closed'
      }),
    provider: () => run('provider', askProvider),
  }
  for (const kind of ['wallet', 'google', 'twitter', 'discord', 'github', 'apple']) {
    actions[`link-${kind}`] = () => run(`link ${kind}`, () => latch.link(kind))
  }
  // The one-line script wires [data-latch-login] itself; the ESM entry (inline page) does not.
  if (document.getElementById('latch-inline')) {
    const signIn = document.querySelector('[data-latch-login]')
    signIn?.addEventListener('click', () => run('login', () => latch.login()))
  }
  for (const button of document.querySelectorAll('[data-action]')) {
    button.addEventListener('click', () => actions[button.dataset.action]?.())
  }

  try {
    await latch.ready
    await showUser()
  } catch (error) {
    userEl.textContent = 'null'
    report(`ready failed: ${describe(error)}`)
  }
}

main().catch((error) => {
  statusEl.textContent = `demo failed: ${describe(error)}`
})
