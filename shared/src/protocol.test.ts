import { expect, test } from 'vitest'
import {
  ANALYTICS_EVENTS,
  APP_ID_LENGTH,
  analyticsEventBody,
  EXPORT_MESSAGES,
  LatchError,
  OAUTH_RETURN_PARAM_NAMES,
  oauthInitBody,
  SUCCESS_CLOSE_DELAY_MS,
} from './index.ts'
import { transactionRequestSchema } from './payloads.ts'
import { pendingOAuthFlowSchema } from './protocol/call-shapes.ts'
import { hostAppConfigSchema } from './protocol/config-shape.ts'
import {
  WALLET_EXPORT_ROUTE,
  WALLET_FRAME_ROUTE,
  walletExportPath,
  walletFramePath,
} from './protocol/http.ts'
import { WALLET_MESSAGES } from './protocol/modal-wallet.ts'
import { exposeMethods, remoteMethods } from './remote.ts'
import { buildUser } from './user.ts'

test('behavior: wallet frame message names', () => {
  expect(Object.values(WALLET_MESSAGES)).toEqual([
    'latch:iframe:ready',
    'latch:wallet:create',
    'latch:wallet:connect',
    'latch:wallet:recover',
    'latch:wallet:rpc',
    'latch:wallet:confirm-fork',
    'latch:wallet:approval',
    'latch:wallet:dismiss-approval',
    'latch:wallet:add-passkey',
    'latch:wallet:passkey-options',
    'latch:wallet:send-calls',
    'latch:wallet:batch-sending',
    'latch:wallet:escape',
  ])
  expect(Object.values(EXPORT_MESSAGES)).toEqual([
    'latch:export:show',
    'latch:export:revealed',
    'latch:export:escape',
  ])
})

test('behavior: OAuth return parameters carry the latch prefix', () => {
  expect(OAUTH_RETURN_PARAM_NAMES).toEqual({
    code: 'latch_oauth_code',
    state: 'latch_oauth_state',
    provider: 'latch_oauth_provider',
    token: 'latch_token',
    connector: 'latch_connector',
    walletClient: 'latch_wallet_client',
  })
})

test('behavior: constants of the spec', () => {
  expect(ANALYTICS_EVENTS).toHaveLength(9)
  expect(APP_ID_LENGTH).toBe(25)
  expect(SUCCESS_CLOSE_DELAY_MS).toBe(1400)
})

test('behavior: a LatchError thrown by an exposed method reaches the caller as a LatchError', async () => {
  const exposed = exposeMethods({
    async fail(): Promise<void> {
      throw LatchError.of('create_exited')
    },
    async echo(value: string): Promise<string> {
      return value
    },
  })
  // Stand-in for postMessage: values cross by structured clone, as penpal sends them.
  const transport = {
    fail: () => exposed.fail().catch((e: unknown) => Promise.reject(structuredClone(e))),
    echo: (v: string) => exposed.echo(v),
  }
  const remote = remoteMethods<typeof exposed>(transport)
  await expect(remote.echo('hi')).resolves.toBe('hi')
  const error = await remote.fail().catch((e: unknown) => e)
  expect(error).toBeInstanceOf(LatchError)
  expect((error as LatchError).message).toBe('User exited before creating a wallet')
  // The remote is not thenable, so it can be returned from async functions.
  expect((remote as unknown as { then?: unknown }).then).toBeUndefined()
})

test('param: host configuration schema rejects wrong types and javascript: links', () => {
  expect(hostAppConfigSchema.safeParse({ loginMethods: ['email'] }).success).toBe(true)
  expect(hostAppConfigSchema.safeParse({ loginMethods: ['fax'] }).success).toBe(false)
  expect(
    hostAppConfigSchema.safeParse({ legal: { privacyPolicyUrl: 'javascript:alert(1)' } }).success,
  ).toBe(false)
})

test('param: the API bodies (full zod) check the provider and event with the zod/mini enums', () => {
  const redirect_to = 'https://acme.test/'
  const browser_hash = 'h'.repeat(43)
  expect(oauthInitBody.safeParse({ provider: 'github', redirect_to, browser_hash }).data).toEqual({
    provider: 'github',
    redirect_to,
    browser_hash,
  })
  // The browser binding is required, and must be 32 bytes of base64url.
  for (const hash of [undefined, '', 'h'.repeat(42), `${'h'.repeat(42)}=`]) {
    expect(
      oauthInitBody.safeParse({ provider: 'github', redirect_to, browser_hash: hash }).error
        ?.issues[0]?.path,
    ).toEqual(['browser_hash'])
  }
  expect(
    oauthInitBody.safeParse({ provider: 'fax', redirect_to, browser_hash }).error?.issues[0],
  ).toMatchObject({
    path: ['provider'],
    message: expect.stringMatching(/^Invalid option: expected one of/),
  })
  expect(analyticsEventBody.safeParse({ event_name: 'modal_open', client_id: 'c' }).success).toBe(
    true,
  )
  expect(analyticsEventBody.safeParse({ event_name: 'nope', client_id: 'c' }).success).toBe(false)
})

test('param: the pending OAuth flow the host page keeps', () => {
  const flow = { state: 's', provider: 'google', intent: 'link', secret: 'x'.repeat(43) }
  expect(pendingOAuthFlowSchema.safeParse(flow).success).toBe(true)
  for (const bad of [
    { ...flow, intent: 'guess' },
    { ...flow, secret: '' },
    { ...flow, state: '' },
    { ...flow, provider: 'fax' },
  ]) {
    expect([bad, pendingOAuthFlowSchema.safeParse(bad).success]).toEqual([bad, false])
  }
})

test('param: transaction request schema', () => {
  expect(transactionRequestSchema.safeParse({ value: 5n, chainId: 1 }).success).toBe(true)
  expect(transactionRequestSchema.safeParse({ value: '5' }).success).toBe(false)
  expect(transactionRequestSchema.safeParse({ to: '0x12' }).success).toBe(false)
})

test('behavior: the user convenience fields; the in-app wallet is the active one', () => {
  const verifiedAt = '2026-01-01T00:00:00.000Z'
  const external = {
    type: 'wallet' as const,
    address: '0x1111111111111111111111111111111111111111' as const,
    chainType: 'ethereum' as const,
    chainId: 'eip155:1',
    walletClient: 'unknown' as const,
    walletClientType: 'metamask',
    connectorType: 'injected',
    recoveryMethod: null,
    verifiedAt,
  }
  const inApp = {
    ...external,
    address: '0x2222222222222222222222222222222222222222' as const,
    walletClient: 'latch' as const,
    walletClientType: 'latch',
    connectorType: 'embedded',
    recoveryMethod: 'user-passcode' as const,
  }
  const user = buildUser('u1', verifiedAt, [
    { type: 'email', address: 'a@example.com', verifiedAt },
    external,
    inApp,
    { type: 'github_oauth', subject: '7', username: 'ada', name: null, email: null, verifiedAt },
  ])
  expect(user.email?.address).toBe('a@example.com')
  expect(user.wallet?.address).toBe(inApp.address)
  expect(user.github?.username).toBe('ada')
  expect(user.phone).toBeUndefined()
})

test('behavior: the wallet frame paths and the server routes are one spelling', () => {
  const id = 'cl0000000000000000000000a'
  expect(walletFramePath(id)).toBe(`/apps/${id}/embedded-wallets`)
  expect(walletExportPath(id)).toBe(`/apps/${id}/embedded-wallets/export`)
  expect(WALLET_FRAME_ROUTE.replace(':appId', id)).toBe(walletFramePath(id))
  expect(WALLET_EXPORT_ROUTE.replace(':appId', id)).toBe(walletExportPath(id))
  // Whatever the id, it stays one path segment.
  expect(walletFramePath('a/../b?c')).toBe('/apps/a%2F..%2Fb%3Fc/embedded-wallets')
})
