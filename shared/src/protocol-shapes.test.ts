/**
 * The payloads the modal checks before its first screen, as shapes (shape.ts): what they
 * accept, what they keep, and how they word a refusal (the modal shows the first issue).
 */
import { expect, test } from 'vitest'
import {
  oauthReturnParamsSchema,
  pendingOAuthFlowSchema,
  unlinkTargetSchema,
} from './protocol/call-shapes.ts'
import { hostAppConfigSchema } from './protocol/config-shape.ts'

const issues = (input: unknown) => hostAppConfigSchema.safeParse(input).error?.issues ?? []

test('behavior: a refused host configuration is worded in English, with the path of its first issue', () => {
  expect(issues({ loginMethods: ['fax'] })).toEqual([
    {
      path: ['loginMethods', 0],
      message:
        'Invalid option: expected one of "wallet"|"email"|"sms"|"google"|"twitter"|"discord"|"github"|"apple"|"passkey"',
    },
  ])
  expect(issues('nope')[0]?.message).toBe('Invalid input: expected object, received string')
  expect(issues(null)[0]?.message).toBe('Invalid input: expected object, received null')
  expect(issues([])[0]?.message).toBe('Invalid input: expected object, received array')
  expect(issues({ name: 'x'.repeat(1001) })[0]?.message).toBe(
    'Too big: expected string to have <=1000 characters',
  )
  expect(issues({ legal: { termsAndConditionsUrl: 'ftp://x' } })[0]).toEqual({
    path: ['legal', 'termsAndConditionsUrl'],
    message: 'must be an http(s) URL',
  })
  expect(issues({ render: { inDialog: 1 } })[0]).toEqual({
    path: ['render', 'inDialog'],
    message: 'Invalid input: expected boolean, received number',
  })
  expect(issues({ appearance: { theme: 'blue' } })[0]).toEqual({
    path: ['appearance', 'theme'],
    message: 'Invalid input',
  })
  expect(issues({ loginMethods: Array(19).fill('email') })[0]?.message).toBe(
    'Too big: expected array to have <=18 items',
  )
  expect(issues({ name: 'Acme' })).toEqual([])
})

test('param: the host configuration keeps what it accepts and drops unknown keys', () => {
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
  expect(parsed.data).not.toHaveProperty('extra')
  for (const theme of ['light', 'dark', '#fff', '#1E1E1D']) {
    expect(hostAppConfigSchema.safeParse({ appearance: { theme } }).success).toBe(true)
  }
  for (const bad of [
    { appearance: { accentColor: 'red' } },
    { appearance: { logo: 'javascript:alert(1)' } },
    { appearance: { palette: { background: 'x'.repeat(33) } } },
    { allowlistConfig: { errorCtaLink: 'data:text/html,x' } },
    { embeddedWallets: { createOnLogin: 'all-users' } },
    { render: { inParentNodeId: 'x'.repeat(257) } },
    { walletConnectCloudProjectId: 5 },
    { id: null },
  ]) {
    expect([bad, hostAppConfigSchema.safeParse(bad).success]).toEqual([bad, false])
  }
})

test('param: OAuth return parameters and the pending flow', () => {
  const params = { code: 'c', state: 's', provider: 'google', token: 't', extra: 'x' }
  expect(oauthReturnParamsSchema.safeParse(params).data).toEqual({
    code: 'c',
    state: 's',
    provider: 'google',
    token: 't',
  })
  expect(oauthReturnParamsSchema.safeParse({ ...params, code: '' }).success).toBe(false)
  expect(oauthReturnParamsSchema.safeParse({ ...params, provider: 'myspace' }).success).toBe(false)
  expect(
    oauthReturnParamsSchema.safeParse({ state: 's', provider: 'google' }).error?.issues,
  ).toEqual([{ path: ['code'], message: 'Invalid input: expected string, received undefined' }])
  const flow = { state: 's', provider: 'github', intent: 'link', secret: 'a'.repeat(43) }
  expect(pendingOAuthFlowSchema.safeParse(flow).data).toEqual(flow)
  expect(pendingOAuthFlowSchema.safeParse({ ...flow, secret: 'a'.repeat(42) }).success).toBe(false)
  expect(pendingOAuthFlowSchema.safeParse({ ...flow, intent: 'steal' }).success).toBe(false)
})

test('param: unlink targets', () => {
  const address = `0x${'ab'.repeat(20)}`
  expect(unlinkTargetSchema.safeParse({ type: 'wallet', address }).data).toEqual({
    type: 'wallet',
    address,
  })
  expect(unlinkTargetSchema.safeParse({ type: 'email', address: 'a@b.test', x: 1 }).data).toEqual({
    type: 'email',
    address: 'a@b.test',
  })
  expect(unlinkTargetSchema.safeParse({ type: 'github_oauth', subject: '42' }).success).toBe(true)
  expect(unlinkTargetSchema.safeParse({ type: 'wallet', address: '0x12' }).success).toBe(false)
  expect(unlinkTargetSchema.safeParse({ type: 'github_oauth', subject: '' }).success).toBe(false)
  expect(unlinkTargetSchema.safeParse({ type: 'fax', number: '1' }).success).toBe(false)
  expect(unlinkTargetSchema.safeParse('wallet').success).toBe(false)
})
