/**
 * exportWallet() and ModalMethods.rpc in the modal: the refusals, the gate in front of the export
 * screen and the export page's URL (theme tokens, never a token), and the chain reads through
 * the API's proxy (the HTTP double). The export page itself runs in Chromium
 * (wallet-frame/src/export.test.ts, e2e/src/in-app-wallet-export.spec.ts).
 */
import {
  exposeMethods,
  type Hex,
  remoteMethods,
  type User,
  type WalletMethods,
} from '@latch/shared'
import { act, cleanup, screen, waitFor } from '@testing-library/react'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { currentFlow } from '../flow/flow.ts'
import { createModalMethods } from '../startup/methods.ts'
import { store } from '../store.ts'
import { type ApiDouble, startApiDouble } from '../test/api-double.ts'
import { jwt, serverConfig, user } from '../test/fixtures.ts'
import { type Harness, renderModal } from '../test/harness.tsx'
import { walletAccount, walletFrameDouble } from '../test/wallet-frame-double.ts'
import { exportFrameUrl } from './export.ts'
import { provideWalletFrame } from './frame.ts'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
afterEach(() => {
  cleanup()
  provideWalletFrame(null)
  api.requests.length = 0
})

const ADDRESS = `0x${'12'.repeat(20)}` as Hex
const methods = () =>
  createModalMethods({
    serverConfig: () => Promise.resolve(serverConfig()),
    restoredUser: () => Promise.resolve(null),
  })

function withWallet(base: User): User {
  const wallet = walletAccount(ADDRESS, 'latch')
  return { ...base, linkedAccounts: [...base.linkedAccounts, wallet], wallet }
}

function signedIn(base: User = withWallet(user())): Harness {
  const harness = renderModal(api)
  act(() => {
    harness.session.start({ token: jwt(Math.floor(Date.now() / 1000) + 3600) }, base)
  })
  return harness
}

function frameOnDevice(): void {
  const double = walletFrameDouble({ wallet: walletAccount(ADDRESS, 'latch') })
  double.device.add(ADDRESS)
  const base = double.frame
  const wallet: WalletMethods = {
    'latch:wallet:create': (p) => base['latch:wallet:create'](p),
    'latch:wallet:connect': (p) => base['latch:wallet:connect'](p),
    'latch:wallet:recover': (p) => base['latch:wallet:recover'](p),
    'latch:wallet:rpc': (p) => base['latch:wallet:rpc'](p),
    'latch:wallet:confirm-fork': (p) => base['latch:wallet:confirm-fork'](p),
    'latch:wallet:approval': (p) => base['latch:wallet:approval'](p),
    'latch:wallet:dismiss-approval': () => base['latch:wallet:dismiss-approval'](),
    'latch:wallet:add-passkey': (p) => base['latch:wallet:add-passkey'](p),
    'latch:wallet:passkey-options': (p) => base['latch:wallet:passkey-options'](p),
  }
  provideWalletFrame(remoteMethods<WalletMethods>(exposeMethods(wallet)))
}

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e,
  )

describe('exportWallet()', () => {
  test('refusal: signed out, or without an in-app wallet, it rejects with the export text and opens nothing', async () => {
    const harness = renderModal(api)
    const text = 'User must be authenticated and have a wallet before it can be exported'
    expect(await rejection(methods().exportWallet())).toMatchObject({ message: text })
    cleanup()
    const noWallet = signedIn(user())
    expect(await rejection(methods().exportWallet())).toMatchObject({ message: text })
    for (const h of [harness, noWallet]) {
      expect(h.hostCalls.filter((c) => c.method === 'setOpen')).toEqual([])
    }
  })

  test('behavior: through the connecting gate to EMBEDDED_WALLET_KEY_EXPORT_SCREEN, which frames the export page of the API origin for the wallet’s address in the theme’s colours; Done waits for the key; closing before it is shown rejects with the export exit text', async () => {
    frameOnDevice()
    signedIn()
    const pending = rejection(methods().exportWallet())
    await screen.findByTestId('screen-EMBEDDED_WALLET_KEY_EXPORT_SCREEN')
    const frame = screen.getByTestId('latch-export-frame') as HTMLIFrameElement
    const url = new URL(frame.src)
    expect(url.pathname).toMatch(/^\/apps\/[^/]+\/embedded-wallets\/export$/)
    expect(`${url.origin}`).toBe(new URL(api.url).origin)
    expect(Object.fromEntries(url.searchParams)).toEqual({
      address: ADDRESS,
      width: '320',
      background: '#FFFFFF',
      foreground: '#1E1E1D',
      accent: expect.stringMatching(/^#[0-9a-f]{6}$/i),
      accentForeground: '#FFFFFF',
    })
    expect(frame.getAttribute('allow')).toBe('clipboard-write')
    expect(frame.title).toBe('Private key')
    // No key yet (jsdom loads no page): Done stays disabled unless the page has failed (jsdom's
    // frame may refuse penpal's messages sooner or later, by load), when it leaves as close does.
    expect(store.getState().delivered).toBe(false)
    const failed = screen.queryByTestId('export-error') !== null
    expect((screen.getByTestId('export-done') as HTMLButtonElement).disabled).toBe(!failed)
    // A page that failed is a failure the caller hears as such, not an exit.
    const failedAtClose = currentFlow().failure !== null
    act(() => {
      screen.getByTestId('close-button').click()
    })
    expect(await pending).toMatchObject(
      failedAtClose
        ? { code: 'something_went_wrong' }
        : {
            code: 'export_exited',
            message: 'User exited before their wallet could be exported',
          },
    )
    await waitFor(() => expect(store.getState().open).toBe(false))
  })

  test('behavior: the export page’s URL never carries the access token, and a palette colour that is not #hex is left to the page', () => {
    signedIn()
    act(() => {
      const app = store.getState().app
      if (app) store.setState({ app: { ...app, palette: { background: 'rgb(0, 0, 0)' } } })
    })
    const url = new URL(exportFrameUrl(ADDRESS))
    expect(url.searchParams.has('background')).toBe(false)
    expect(url.searchParams.has('token')).toBe(false)
    expect(url.href).not.toContain('eyJ')
  })
})

describe('rpc(): chain reads for the host page’s provider', () => {
  test('behavior: a read goes to the API’s chain proxy of that chain with the session’s token and answers the node’s result', async () => {
    signedIn()
    api.on('POST /chains/137/rpc', (body) => {
      const { id, method, params } = body as { id: number; method: string; params: unknown[] }
      return { body: { jsonrpc: '2.0', id, result: `${method}:${JSON.stringify(params)}` } }
    })
    expect(await methods().rpc(137, 'eth_getBalance', [ADDRESS, 'latest'])).toBe(
      `eth_getBalance:["${ADDRESS}","latest"]`,
    )
    const request = api.requests.find((r) => r.path.endsWith('/chains/137/rpc'))
    expect(request?.headers.authorization).toMatch(/^Bearer ey/)
  })

  test('refusal: a method outside the read list (the broadcast included), an unsupported chain, bad params, or signed out, each refused without reaching the API', async () => {
    renderModal(api)
    expect(await rejection(methods().rpc(1, 'eth_blockNumber'))).toMatchObject({
      code: 'rpc_unauthorized',
      rpcCode: 4100,
    })
    cleanup()
    signedIn()
    for (const method of [
      'eth_sendRawTransaction',
      'eth_sendTransaction',
      'eth_accounts',
      'debug_traceCall',
    ]) {
      expect(await rejection(methods().rpc(1, method, []))).toMatchObject({
        code: 'rpc_unsupported_method',
        rpcCode: 4200,
      })
    }
    expect(await rejection(methods().rpc(42, 'eth_blockNumber'))).toMatchObject({
      message: 'Unsupported chainId',
    })
    expect(await rejection(methods().rpc(1, 'eth_call', 'nope'))).toMatchObject({
      code: 'rpc_invalid_params',
    })
    expect(api.requests.filter((r) => r.path.includes('/chains/'))).toEqual([])
  })
})
