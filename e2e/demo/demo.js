// The demo host page: shows the signed-in user and drives the Latch SDK from a few buttons.
const userEl = document.querySelector('[data-testid="user"]')
const statusEl = document.querySelector('[data-testid="status"]')

function describe(error) {
  if (error && typeof error === 'object') {
    const code = 'code' in error ? `${error.code}: ` : ''
    return `${code}${error.message}`
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
  const latch = await waitForLatch(10_000)
  const showUser = async () => {
    const user = await latch.getUser()
    userEl.textContent = JSON.stringify(user, null, 2)
  }
  const report = (text) => {
    statusEl.textContent = text
  }
  const run = async (label, action) => {
    try {
      const result = await action()
      report(`${label}: ${typeof result === 'string' ? result : JSON.stringify(result ?? null)}`)
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

  const actions = {
    'link-email': () => run('link email', () => latch.link('email')),
    'link-phone': () => run('link phone', () => latch.link('phone')),
    token: () => run('access token', () => latch.getAccessToken()),
    logout: () => run('logout', () => latch.logout()),
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
