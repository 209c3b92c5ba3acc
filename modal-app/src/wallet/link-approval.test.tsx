/**
 * A new sign-in method's approval, as the modal asks the wallet frame for it: the frame is told
 * the method's kind and identifier only, and names the method itself (wallet-frame/src/approval.ts);
 * no caption of the modal's goes with it. The frame is test/wallet-frame-double.ts.
 */
import type { User } from '@latch/shared'
import { act, cleanup, screen, waitFor } from '@testing-library/react'
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest'
import { store } from '../store.ts'
import { type ApiDouble, startApiDouble } from '../test/api-double.ts'
import { jwt, user } from '../test/fixtures.ts'
import { renderModal } from '../test/harness.tsx'
import { walletAccount, walletFrameDouble } from '../test/wallet-frame-double.ts'
import { provideWalletFrame } from './frame.ts'
import { approveLinkOf } from './link-approval.tsx'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
  api.on('POST /analytics_events', { body: { success: true } })
})
afterAll(() => api.close())
afterEach(() => {
  cleanup()
  api.requests.length = 0
  provideWalletFrame(null)
})

const ADDRESS = `0x${'12'.repeat(20)}` as const
/** A user with an automatic-recovery in-app wallet, signed in. */
function signedIn(): void {
  const base = user()
  const who: User = {
    ...base,
    linkedAccounts: [...base.linkedAccounts, walletAccount(ADDRESS, 'latch')],
  }
  const harness = renderModal(api)
  act(() => harness.session.start({ token: jwt(Math.floor(Date.now() / 1000) + 600) }, who))
}

const SIWE = [
  'localhost wants you to sign in with your Ethereum account:',
  '0xFB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
  '',
].join('\n')

test.each([
  [
    'an e-mail address',
    '/passwordless',
    { email: 'new@example.com' },
    undefined,
    'email',
    'new@example.com',
  ],
  [
    'a phone number',
    '/passwordless_sms',
    { phoneNumber: '+14155550123' },
    undefined,
    'phone',
    '+14155550123',
  ],
  [
    'an external wallet',
    '/siwe',
    { message: SIWE },
    undefined,
    'siwe',
    '0xFB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
  ],
  ['a passkey', '/passkeys', {}, undefined, 'passkey', 'passkey'],
  ['an OAuth account', '/oauth', {}, 'github', 'oauth', 'github'],
] as const)(
  'behavior: linking %s asks the wallet frame to approve the method by its kind and identifier, with no label',
  async (_, path, body, account, type, identifier) => {
    const frame = walletFrameDouble({ wallet: walletAccount(ADDRESS, 'latch') })
    provideWalletFrame(frame.frame)
    signedIn()
    if (account) act(() => store.setState({ flow: { kind: 'link', account } }))
    let approved = false
    act(() => {
      void approveLinkOf(path, body).then(() => {
        approved = true
      })
    })
    await waitFor(() => expect(approved).toBe(true))
    const asked = frame.calls.filter((c) => c.method === 'latch:wallet:approval')
    expect(asked).toEqual([
      {
        method: 'latch:wallet:approval',
        params: {
          accessToken: expect.any(String),
          kind: 'link',
          locale: 'en',
          colors: expect.any(Object),
          method: { type, identifier },
        },
      },
    ])
    expect(asked[0]?.params).not.toHaveProperty('label')
    await waitFor(() => expect(screen.queryByTestId('link-approval')).toBeNull())
  },
)
