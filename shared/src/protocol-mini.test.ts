/**
 * The frame-payload schemas as a frame bundle sees them: this file imports protocol.ts alone
 * (no api.ts, so no full zod, which would install its English messages globally).
 */
import { expect, test } from 'vitest'
import { config } from 'zod/mini'
import { hostAppConfigSchema, payloadIssues, unlinkTargetSchema } from './protocol.ts'

test('behavior: without full zod loaded, payload issues still carry zod’s English messages', async () => {
  // The premise: nothing in this file's module graph installed a locale, so plain parsing
  // words nothing.
  expect(config().localeError).toBeUndefined()
  expect(hostAppConfigSchema.safeParse('nope').error?.issues[0]?.message).toBe('Invalid input')
  expect(await payloadIssues(hostAppConfigSchema, { loginMethods: ['fax'] })).toEqual([
    {
      code: 'invalid_value',
      values: ['wallet', 'email', 'sms', 'google', 'twitter', 'discord', 'github', 'apple'],
      path: ['loginMethods', 0],
      message:
        'Invalid option: expected one of "wallet"|"email"|"sms"|"google"|"twitter"|"discord"|"github"|"apple"',
    },
  ])
  expect((await payloadIssues(hostAppConfigSchema, 'nope'))[0]?.message).toBe(
    'Invalid input: expected object, received string',
  )
  expect((await payloadIssues(hostAppConfigSchema, { name: 'x'.repeat(1001) }))[0]?.message).toBe(
    'Too big: expected string to have <=1000 characters',
  )
  expect(
    (await payloadIssues(hostAppConfigSchema, { legal: { termsAndConditionsUrl: 'ftp://x' } }))[0],
  ).toMatchObject({ path: ['legal', 'termsAndConditionsUrl'], message: 'must be an http(s) URL' })
  // Loading the messages installs nothing globally either.
  expect(config().localeError).toBeUndefined()
  expect(await payloadIssues(hostAppConfigSchema, { name: 'Acme' })).toEqual([])
})

test('param: the host configuration schema keeps what it accepts and strips unknown keys', () => {
  const input = {
    name: 'Acme',
    loginMethods: ['email', 'google'],
    appearance: { theme: '#0a0a0a', accentColor: '#abc', showWalletLoginFirst: true },
    allowlistConfig: { errorTitle: null, errorCtaLink: 'https://acme.test/waitlist' },
    render: { inParentNodeId: null },
    extra: 1,
  }
  const parsed = hostAppConfigSchema.safeParse(input)
  expect(parsed.success).toBe(true)
  const { extra: _, ...known } = input
  expect(parsed.data).toEqual(known)
  expect(hostAppConfigSchema.safeParse({ appearance: { theme: 'blue' } }).success).toBe(false)
  expect(hostAppConfigSchema.safeParse({ render: { inDialog: 'yes' } }).success).toBe(false)
})

test('param: unlink targets', () => {
  const address = `0x${'ab'.repeat(20)}`
  expect(unlinkTargetSchema.safeParse({ type: 'wallet', address }).data).toEqual({
    type: 'wallet',
    address,
  })
  expect(unlinkTargetSchema.safeParse({ type: 'wallet', address: '0x12' }).success).toBe(false)
  expect(unlinkTargetSchema.safeParse({ type: 'github_oauth', subject: '' }).success).toBe(false)
  expect(unlinkTargetSchema.safeParse({ type: 'fax', number: '1' }).success).toBe(false)
})
