import { expect, test } from 'vitest'
import * as express from './express.ts'
import * as hono from './hono.ts'
import * as node from './index.ts'

// Every runtime export of @latch/node's three entries, so an accidental export or removal shows
// in review. After a deliberate change: npx vitest run --project server-sdk src/exports.test.ts -u
test('behavior: the public exports of @latch/node, @latch/node/hono and @latch/node/express', () => {
  expect({
    '@latch/node': Object.keys(node).sort(),
    '@latch/node/hono': Object.keys(hono).sort(),
    '@latch/node/express': Object.keys(express).sort(),
  }).toMatchInlineSnapshot(`
    {
      "@latch/node": [
        "LatchApiError",
        "LatchAuthError",
        "WEBHOOK_TOLERANCE_S",
        "WebhookVerificationError",
        "createLatchAdmin",
        "createTokenVerifier",
        "verifyAccessToken",
        "verifyWebhook",
      ],
      "@latch/node/express": [
        "requireUser",
      ],
      "@latch/node/hono": [
        "requireUser",
      ],
    }
  `)
})
