import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { ERRORS, OAUTH_ERROR_DISPLAY } from '../errors/index.ts'
import { EN, TABLES } from './all.ts'
import { LOCALES, pickLocale } from './locales.ts'

/**
 * SPEC's texts the table holds, as SPEC writes them, with the table's English for each (SPEC's
 * `{provider name}` is the table's `{provider}`, `{app name}` its `{app}`). Checked against the
 * table always, and against SPEC itself wherever SPEC is found (LATCH_SPEC, or SPEC.md in a
 * `shared` folder beside the repository), so a text SPEC changes fails here.
 */
const SPEC_TEXTS: [spec: string, table: string[]][] = [
  ['Connect Wallet', ['Connect Wallet']],
  ['Email', ['Email']],
  ['Phone', ['Phone']],
  ['Email & Social', ['Email & Social']],
  ['Phone & Social', ['Phone & Social']],
  ['Or', ['Or']],
  ['Get started without a wallet.', ['Get started without a wallet.']],
  ['Easily connect an email', ['Easily connect an email']],
  ['Easily connect a phone number', ['Easily connect a phone number']],
  ['Get started quickly with email', ['Get started quickly with email']],
  ['Get started quickly with your phone', ['Get started quickly with your phone']],
  ['Connect your email', ['Connect your email']],
  ['Connect your phone', ['Connect your phone']],
  [
    'Add your email/number to your {app name} account',
    ['Add your email to your {app} account', 'Add your number to your {app} account'],
  ],
  ['Success!', ['Success!']],
  ['Could not connect with wallet', ['Could not connect with wallet']],
  [
    'Please check that Phantom multichain is enabled and try again.',
    ['Please check that Phantom multichain is enabled and try again.'],
  ],
  ['Try again', ['Try again']],
  ['Cancel', ['Cancel']],
  ["You don't have access to this app", ["You don't have access to this app"]],
  ['Have you been invited?', ['Have you been invited?']],
  ['Try another account', ['Try another account']],
  ['Verifying connection to {provider name}', ['Verifying connection to {provider}']],
  ['Just a few moments more', ['Just a few moments more']],
  ['Successfully connected with {provider name}', ['Successfully connected with {provider}']],
  ['You’re good to go!', ['You’re good to go!']],
  ['Set your passcode', ['Set your passcode']],
  ['Generate passcode', ['Generate passcode']],
  ['Set passcode', ['Set passcode']],
  ['Why am I doing this?', ['Why am I doing this?']],
  ['Secure your passcode', ['Secure your passcode']],
  ['I have saved my passcode', ['I have saved my passcode']],
  ['Passcode can be letters and numbers', ['Passcode can be letters and numbers']],
  ['Load your account', ['Load your account']],
  [
    "We haven't seen this device yet. To continue, please enter your passcode.",
    ["We haven't seen this device yet. To continue, please enter your passcode."],
  ],
  ['Recover your account', ['Recover your account']],
  ['Sign message', ['Sign message']],
  ['Sign and continue', ['Sign and continue']],
  ['Success', ['Success']],
  ['Review transaction', ['Review transaction']],
  ['Send ETH', ['Send ETH']],
  ['Submit transaction', ['Submit transaction']],
  ['Submitting (may take a few minutes)...', ['Submitting (may take a few minutes)...']],
  ['Transaction complete!', ['Transaction complete!']],
  ["You're all set.", ["You're all set."]],
  ['All Done', ['All Done']],
  ['Connect your wallet', ['Connect your wallet']],
  ['Reconnect your wallet', ['Reconnect your wallet']],
  ['Get started with a new wallet', ['Get started with a new wallet']],
  ['Create a new wallet', ['Create a new wallet']],
  ['Done! I have my wallet', ['Done! I have my wallet']],
  ['Still not sure? Learn more', ['Still not sure? Learn more']],
  ['Redirecting to Phantom Mobile Wallet', ['Redirecting to Phantom Mobile Wallet']],
  ['Still here?', ['Still here?']],
  ['Go to App Store', ['Go to App Store']],
]

const here = dirname(fileURLToPath(import.meta.url))
const specPath = process.env.LATCH_SPEC ?? join(here, '..', '..', '..', '..', 'shared', 'SPEC.md')
const spec = existsSync(specPath) ? readFileSync(specPath, 'utf8') : null

const placeholders = (text: string): string[] =>
  [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string).sort()

describe('the English table', () => {
  const english = new Set(Object.values(EN.m))
  test.each(SPEC_TEXTS)('spec: %j is in the table', (_spec, table) => {
    for (const text of table) expect(english).toContain(text)
  })

  test.skipIf(spec === null)('spec: each of those texts is written so in SPEC', () => {
    for (const [text] of SPEC_TEXTS) expect(spec).toContain(`'${text}'`)
  })

  test("behavior: the OAuth error texts are the OAuth error table's", () => {
    expect([EN.m.oaLinked, EN.m.oaInvalid, EN.m.oaDenied]).toEqual([
      OAUTH_ERROR_DISPLAY.linked_to_another_user.message,
      OAUTH_ERROR_DISPLAY.oauth_invalid_code.message,
      OAUTH_ERROR_DISPLAY.oauth_user_denied.message,
    ])
  })

  test("behavior: the second lines of errors are the catalogue's details", () => {
    expect([EN.m.dAddress, EN.m.dRetryConnect, EN.m.dPending, EN.m.dRetrySign, EN.m.later]).toEqual(
      [
        ERRORS.wallet_linked_to_another_user.details,
        ERRORS.wallet_request_timeout.details,
        ERRORS.rpc_request_pending.details,
        ERRORS.signature_rejected.details,
        ERRORS.something_went_wrong.details,
      ],
    )
  })

  test('behavior: the error texts the modal shows are the catalogue messages, the host contract', () => {
    for (const [code, message] of Object.entries(EN.e)) {
      expect(message).toBe(ERRORS[code as keyof typeof ERRORS].message)
    }
  })
})

describe.each(LOCALES.filter((l) => l !== 'en'))('the %s table', (locale) => {
  const table = TABLES[locale]

  test('behavior: every key of English, no other, none empty', () => {
    for (const part of ['m', 'e', 'mail'] as const) {
      expect(Object.keys(table[part]).sort()).toEqual(Object.keys(EN[part]).sort())
      for (const text of Object.values(table[part])) expect(text.trim()).not.toBe('')
    }
  })

  test('behavior: the same placeholders as English in every text', () => {
    for (const part of ['m', 'e', 'mail'] as const) {
      const english = EN[part] as Record<string, string>
      for (const [key, text] of Object.entries(table[part] as Record<string, string>)) {
        expect({ key, placeholders: placeholders(text) }).toEqual({
          key,
          placeholders: placeholders(english[key] as string),
        })
      }
    }
  })
})

test('param: pickLocale takes the first tag a shipped locale matches, else English', () => {
  expect(pickLocale(['ja-JP', 'en'])).toBe('ja')
  expect(pickLocale(['pt-BR'])).toBe('pt-BR')
  expect(pickLocale(['pt-PT'])).toBe('pt-BR')
  expect(pickLocale(['zh-TW'])).toBe('zh-CN')
  expect(pickLocale(['es-MX'])).toBe('es')
  expect(pickLocale(['xx', 'de-AT'])).toBe('de')
  expect(pickLocale(['en-GB', 'fr'])).toBe('en')
  expect(pickLocale(['xx'])).toBe('en')
  expect(pickLocale([])).toBe('en')
})
