// @vitest-environment node
/**
 * The modal server's WalletConnect relay: its URL into the page as a meta tag,
 * escaped, and its origin admitted in the CSP's connect-src; ws(s) only.
 */
import { expect, test } from 'vitest'
import { useMinimalModal } from './src/test/server-support.ts'

// biome-ignore lint/correctness/useHookAtTopLevel: a Vitest helper that registers after-hooks, not a React hook
const serve = useMinimalModal('latch-modal-relay-')
const start = (walletConnectRelayUrl?: string) =>
  serve(walletConnectRelayUrl === undefined ? {} : { walletConnectRelayUrl })

/** The page and the sources its CSP lets it connect to. */
async function page(url: string): Promise<{ html: string; connectSrc: string[] }> {
  const res = await fetch(`${url}/`)
  const csp = res.headers.get('content-security-policy') ?? ''
  const directive = csp
    .split(';')
    .map((d) => d.trim())
    .find((d) => d.startsWith('connect-src '))
  return { html: await res.text(), connectSrc: directive?.split(' ').slice(1) ?? [] }
}

test('behavior: the configured relay reaches the page as its meta tag, escaped, and connect-src admits its origin only', async () => {
  const server = await start('wss://relay.example.test:8443/v2?a=1&b="2"')
  try {
    const { html, connectSrc } = await page(server.url)
    expect(html).toContain(
      '<meta name="latch-walletconnect-relay-url" content="wss://relay.example.test:8443/v2?a=1&amp;b=&quot;2&quot;" />',
    )
    expect(connectSrc).toEqual(["'self'", 'http://127.0.0.1:9', 'wss://relay.example.test:8443'])
    expect(html).not.toContain('relay.walletconnect.org')
  } finally {
    await server.close()
  }
})

test("behavior: without one, the page names WalletConnect's public relay and the CSP admits it", async () => {
  const server = await start()
  try {
    const { html, connectSrc } = await page(server.url)
    expect(html).toContain(
      '<meta name="latch-walletconnect-relay-url" content="wss://relay.walletconnect.org" />',
    )
    expect(connectSrc).toContain('wss://relay.walletconnect.org')
  } finally {
    await server.close()
  }
})

test('error: a relay URL that is not ws(s), or carries credentials, refuses to start', async () => {
  for (const bad of [
    'https://relay.example.test',
    'http://127.0.0.1:7070',
    'wss://user:secret@relay.example.test',
    'javascript:alert(1)',
    'not a url',
    '',
  ]) {
    await expect(start(bad)).rejects.toThrow(
      /walletConnectRelayUrl must be a ws\(s\) URL without credentials/,
    )
  }
})
