// @vitest-environment node
import { expect, test } from 'vitest'

test('behavior: importing the ESM entry on a server touches neither window nor document', async () => {
  expect(typeof window).toBe('undefined')
  expect(typeof document).toBe('undefined')
  const sdk = await import('./index.ts')
  expect(typeof sdk.createLatch).toBe('function')
})

test('behavior: createLatch on a server answers with a rejected ready, not a crash', async () => {
  const { createLatch, LatchError } = await import('./index.ts')
  const latch = createLatch({
    appId: 'cl0000000000000000000000a',
    modalUrl: 'https://auth.example.com',
  })
  const error = await latch.ready.catch((e: unknown) => e)
  expect(error).toBeInstanceOf(LatchError)
  expect((error as InstanceType<typeof LatchError>).code).toBe('modal_unreachable')
  latch.destroy()
})
