// @vitest-environment node
import { expect, test } from 'vitest'
import * as sdk from './index.ts'

// Every runtime export of the SDK's ESM entry, so an accidental export or removal shows in
// review. After a deliberate change: npx vitest run --project host-sdk-node src/exports.test.ts -u
test('behavior: the public exports of the host SDK', () => {
  expect(Object.keys(sdk).sort()).toMatchInlineSnapshot(`
    [
      "LatchError",
      "createLatch",
    ]
  `)
})
