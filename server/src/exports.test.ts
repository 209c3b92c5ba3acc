import { expect, test } from 'vitest'
import * as server from './index.ts'
import * as testing from './testing/index.ts'

// Every runtime export of the server's programmatic entry and its testing entry (the package's
// two exports), so an accidental export or removal shows in review. After a deliberate change:
// npx vitest run --project server src/exports.test.ts -u
test('behavior: the public exports of the server', () => {
  expect(Object.keys(server).sort()).toMatchInlineSnapshot(`
    [
      "ConfigError",
      "createApi",
      "createAppSecret",
      "loadConfig",
      "openServices",
      "startServer",
    ]
  `)
})

test('behavior: the public exports of the server’s testing entry', () => {
  expect(Object.keys(testing).sort()).toMatchInlineSnapshot(`
    [
      "ANVIL_ACCOUNTS",
      "ANVIL_BALANCE_WEI",
      "POSTGRES_BIN",
      "anvilBinary",
      "authorizeAtMock",
      "findCode",
      "postgresAvailable",
      "runPostgres",
      "startAnvil",
      "startMockProviders",
      "startPostgres",
      "startSmtpCatcher",
      "startTwilioDouble",
    ]
  `)
})
