// @vitest-environment node
import { renderToString } from 'react-dom/server'
import { expect, test } from 'vitest'
import { LatchLoginButton, LatchProvider, useLatch, useWallet } from './index.ts'

function Status() {
  const { ready, authenticated } = useLatch()
  const { wallet } = useWallet()
  return <p>{`${ready} ${authenticated} ${wallet}`}</p>
}

test('behavior: rendering on a server touches neither window nor document and makes no client; hooks answer not ready, signed out', () => {
  expect(typeof window).toBe('undefined')
  expect(typeof document).toBe('undefined')
  const html = renderToString(
    <LatchProvider appId="cl0000000000000000000000a" modalUrl="https://auth.example.com">
      <Status />
      <LatchLoginButton />
    </LatchProvider>,
  )
  expect(html).toBe('<p>false false null</p><button type="button" disabled="">Sign in</button>')
  // The page's table of shared clients (@latch/host-sdk/shared-client) was never even made.
  expect((globalThis as Record<symbol, unknown>)[Symbol.for('dev.latch.clients')]).toBeUndefined()
})
