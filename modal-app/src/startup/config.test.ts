// @vitest-environment node
import { DEFAULT_ACCENT_COLOR, EMAIL_AND_SMS_WARNING, isLatchError } from '@latch/shared'
import { describe, expect, test } from 'vitest'
import { serverConfig } from '../test/fixtures.ts'
import { mergeConfig } from './config.ts'
import { checkHostConfig } from './config-check.ts'

describe('mergeConfig', () => {
  test('behavior: login methods are the intersection of host and server', () => {
    const app = mergeConfig(serverConfig({ googleOAuth: true, smsAuth: false }), {
      loginMethods: ['email', 'sms', 'google', 'github'],
    })
    expect(app.methods).toEqual({
      wallet: false,
      email: true,
      sms: false,
      social: ['google'],
      passkey: false,
    })
    expect(app.config).toMatchObject({ walletAuth: false, githubOAuth: false, googleOAuth: true })
  })

  test('behavior: without host methods, the server decides; e-mail wins over SMS', () => {
    const app = mergeConfig(serverConfig({ smsAuth: true }), {})
    expect(app.methods).toMatchObject({ wallet: true, email: true, sms: false })
  })

  test('error: nothing left after the intersection', () => {
    const e = (() => {
      try {
        mergeConfig(serverConfig({ smsAuth: false }), { loginMethods: ['sms'] })
      } catch (error) {
        return error
      }
    })()
    expect(isLatchError(e) && e.code).toBe('no_login_method')
  })

  test('behavior: the server allowlist texts win; host texts fill gaps; defaults last', () => {
    const app = mergeConfig(
      serverConfig({
        allowlistConfig: {
          errorTitle: 'Server title',
          errorDetail: null,
          errorCtaText: null,
          errorCtaLink: null,
        },
      }),
      { allowlistConfig: { errorTitle: 'Host title', errorDetail: 'Host detail' } },
    )
    expect(app.allowlist).toEqual({
      title: 'Server title',
      detail: 'Host detail',
      // The screen's default, in the visitor's language (AllowlistRejection).
      ctaText: null,
      ctaLink: null,
    })
  })

  test('behavior: appearance from the host, else the server, else the defaults', () => {
    const plain = mergeConfig(serverConfig(), {})
    expect(plain).toMatchObject({
      theme: 'light',
      accentColor: DEFAULT_ACCENT_COLOR,
      showWalletLoginFirst: true,
      inDialog: true,
    })
    const themed = mergeConfig(serverConfig({ accentColor: '#111111', theme: 'dark' }), {
      appearance: { accentColor: '#222222' },
      render: { inParentNodeId: 'slot' },
    })
    expect(themed).toMatchObject({ theme: 'dark', accentColor: '#222222', inDialog: false })
  })

  test('behavior: inline only inside a parent element, as the host SDK mounts it: inDialog false alone stays a dialog', () => {
    const merged = (render: { inDialog?: boolean; inParentNodeId?: string | null }) =>
      mergeConfig(serverConfig(), { render }).inDialog
    expect(merged({ inDialog: false })).toBe(true)
    expect(merged({ inDialog: false, inParentNodeId: null })).toBe(true)
    expect(merged({ inDialog: false, inParentNodeId: 'slot' })).toBe(false)
    expect(merged({ inDialog: true, inParentNodeId: 'slot' })).toBe(false)
    expect(merged({})).toBe(true)
  })
})

describe('checkHostConfig', () => {
  test('behavior: e-mail with SMS turns SMS off with a warning', async () => {
    const { config, warnings } = await checkHostConfig({ loginMethods: ['email', 'sms'] })
    expect(config.loginMethods).toEqual(['email'])
    expect(warnings).toEqual([EMAIL_AND_SMS_WARNING])
  })

  test('behavior: a mid-tone background warns; light and dark do not', async () => {
    expect((await checkHostConfig({ appearance: { theme: '#808080' } })).warnings).toHaveLength(1)
    expect((await checkHostConfig({ appearance: { theme: '#FAFAFA' } })).warnings).toHaveLength(0)
    expect((await checkHostConfig({ appearance: { theme: 'dark' } })).warnings).toHaveLength(0)
  })

  test('error: schema failures name the field', async () => {
    await expect(
      checkHostConfig({ legal: { privacyPolicyUrl: 'javascript:alert(1)' } }),
    ).rejects.toThrow('Invalid Latch configuration: legal.privacyPolicyUrl: must be an http(s) URL')
    await expect(checkHostConfig('nope')).rejects.toThrow(
      'Invalid Latch configuration: Invalid input: expected object, received string',
    )
    await expect(checkHostConfig({ appearance: { showWalletLoginFirst: 1 } })).rejects.toThrow(
      'Invalid Latch configuration: appearance.showWalletLoginFirst: Invalid input: expected boolean, received number',
    )
  })
})
