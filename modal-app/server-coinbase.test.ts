// @vitest-environment node
/** The modal server's Coinbase Wallet keys URL: into the page, http(s) only. */
import { expect, test } from 'vitest'
import { useMinimalModal } from './server-test-support.ts'

// biome-ignore lint/correctness/useHookAtTopLevel: a Vitest helper that registers after-hooks, not a React hook
const serve = useMinimalModal('latch-modal-keys-')
const start = (coinbaseKeysUrl?: string) =>
  serve(coinbaseKeysUrl === undefined ? {} : { coinbaseKeysUrl })

test('behavior: the configured keys URL reaches the page as its meta tag, escaped; none without it', async () => {
  const server = await start('http://127.0.0.1:4444/keys?a=1&b="2"')
  try {
    const page = await (await fetch(`${server.url}/`)).text()
    expect(page).toContain(
      '<meta name="latch-coinbase-keys-url" content="http://127.0.0.1:4444/keys?a=1&amp;b=&quot;2&quot;" />',
    )
  } finally {
    await server.close()
  }
  const plain = await start()
  try {
    expect(await (await fetch(`${plain.url}/`)).text()).not.toContain('latch-coinbase-keys-url')
  } finally {
    await plain.close()
  }
})

test('error: a keys URL that is not http(s) refuses to start', async () => {
  for (const bad of ['javascript:alert(1)', 'data:text/html,x', 'not a url']) {
    await expect(start(bad)).rejects.toThrow(/coinbaseKeysUrl must be an http\(s\) URL/)
  }
})
