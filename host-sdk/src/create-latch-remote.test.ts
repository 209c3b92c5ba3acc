/**
 * What createLatch hands the modal and does with its answers, over a stand-in for penpal's
 * connection (jsdom has no second origin; link.test.ts runs the built SDK against a modal page
 * in Chromium). The handshake starts when the frame's window writes from the modal's origin.
 */
import {
  exposeMethods,
  type HostMethods,
  type InitResult,
  type LatchClient,
  LatchError,
  type ModalMethods,
  originNotAllowed,
  refusingModal,
  serializeError,
} from '@latch/shared'
import { connect } from 'penpal'
import { afterEach, beforeAll, beforeEach, expect, test, vi } from 'vitest'
import { createLatch } from './create-latch.ts'

vi.mock('penpal', async (importOriginal) => ({
  ...(await importOriginal<typeof import('penpal')>()),
  connect: vi.fn(),
}))

const APP_ID = 'cl0000000000000000000000a'
const MODAL = 'https://modal.example'

const initResult: InitResult = {
  app: { id: APP_ID } as InitResult['app'],
  warnings: [],
  user: null,
}

let modal: {
  init: ReturnType<typeof vi.fn>
  signMessage: ReturnType<typeof vi.fn>
  rpc: ReturnType<typeof vi.fn>
}
let host: HostMethods | undefined
let latch: LatchClient | undefined

beforeAll(() => {
  // jsdom has no modal dialogs; these follow the standard's effect on the open attribute.
  HTMLDialogElement.prototype.showModal = function (this: HTMLDialogElement) {
    this.setAttribute('open', '')
  }
  HTMLDialogElement.prototype.close = function (this: HTMLDialogElement) {
    this.removeAttribute('open')
  }
})

beforeEach(() => {
  modal = { init: vi.fn(async () => initResult), signMessage: vi.fn(), rpc: vi.fn() }
  host = undefined
  vi.mocked(connect).mockImplementation((({ methods }: { methods: HostMethods }) => {
    host = methods
    return {
      promise: Promise.resolve(modal as unknown as ModalMethods),
      destroy: () => {},
    }
  }) as unknown as typeof connect)
})

afterEach(() => {
  latch?.destroy()
  latch = undefined
  document.body.innerHTML = ''
  history.replaceState(null, '', '/')
})

/** Starts the client and lets the modal's first message (its SYN) arrive from the frame. */
async function started(): Promise<LatchClient> {
  const client = createLatch({ appId: APP_ID, modalUrl: MODAL })
  latch = client
  const iframe = document.querySelector('iframe') as HTMLIFrameElement
  window.dispatchEvent(
    new MessageEvent('message', {
      origin: MODAL,
      source: iframe.contentWindow,
      data: { namespace: 'penpal', type: 'SYN' },
    }),
  )
  await client.ready
  return client
}

const dialog = () => document.querySelector('dialog') as HTMLDialogElement

test('refusal: a fork token in the address query never reaches the modal; init hears only that there was one', async () => {
  history.replaceState(null, '', '/shop?item=7&latch_fork=LEAKED-token#pay')
  const client = createLatch({ appId: APP_ID, modalUrl: MODAL })
  // Off the address bar before anything else on the page runs.
  expect(location.search).toBe('?item=7')
  expect(location.hash).toBe('#pay')
  client.destroy()
  history.replaceState(null, '', '/shop?item=7&latch_fork=LEAKED-token#pay')
  await started()
  expect(modal.init).toHaveBeenCalledTimes(1)
  // The configuration, no OAuth return, no flow, no token, no wallet client, and the flag the
  // modal turns into the page's 'warning'.
  expect(modal.init.mock.calls[0]).toEqual([{}, undefined, undefined, undefined, undefined, true])
  expect(JSON.stringify(modal.init.mock.calls)).not.toContain('LEAKED')
})

test('behavior: a fork token in the fragment reaches init, and the flag stays down', async () => {
  history.replaceState(null, '', '/shop#latch_fork=frag-token')
  await started()
  expect(modal.init.mock.calls[0]).toEqual([
    {},
    undefined,
    undefined,
    'frag-token',
    undefined,
    false,
  ])
  expect(location.href).toBe(`${location.origin}/shop`)
})

test("behavior: a flow refused with -32002 ('Request already pending') leaves the request on screen open; another failure closes it", async () => {
  const client = await started()
  // The modal opens itself for the request it shows.
  await host?.setOpen(true)
  expect(dialog().open).toBe(true)
  modal.signMessage.mockRejectedValueOnce(serializeError(LatchError.of('rpc_request_pending')))
  const refused = await client.signMessage('second').catch((e: unknown) => e)
  expect(refused).toBeInstanceOf(LatchError)
  expect((refused as LatchError).code).toBe('rpc_request_pending')
  expect((refused as LatchError).rpcCode).toBe(-32002)
  expect(dialog().open).toBe(true)
  // Any other failure of a flow closes the dialog (here the visitor rejected the signature).
  modal.signMessage.mockRejectedValueOnce(serializeError(LatchError.of('signature_rejected')))
  const rejected = await client.signMessage('first').catch((e: unknown) => e)
  expect((rejected as LatchError).code).toBe('signature_rejected')
  expect(dialog().open).toBe(false)
})

test("behavior: sendCalls() sends wallet_sendCalls by name through the modal's rpc and resolves with its { id }; a closed review rejects with transaction_exited and the dialog closes", async () => {
  const client = await started()
  const id = `0x${'ab'.repeat(32)}`
  const request = { chainId: '0x1', calls: [{ to: `0x${'12'.repeat(20)}`, data: '0x' }] }
  modal.rpc.mockResolvedValueOnce({ id })
  await expect(client.sendCalls(request)).resolves.toEqual({ id })
  expect(modal.rpc.mock.calls[0]).toEqual([0, 'wallet_sendCalls', [request]])
  await host?.setOpen(true)
  modal.rpc.mockRejectedValueOnce(
    serializeError(LatchError.of('transaction_exited', { message: 'User exited the modal' })),
  )
  const closed = await client.sendCalls(request).catch((e: unknown) => e)
  expect((closed as LatchError).code).toBe('transaction_exited')
  expect(dialog().open).toBe(false)
})

test('error: on an origin the app does not list (the modal server’s refusal page answers), ready and every call reject with origin_not_allowed, naming the origin and the command that adds it', async () => {
  // What modal-app/src/startup/refused.ts exposes to the page.
  const refusal = exposeMethods(refusingModal(originNotAllowed('https://new.example', APP_ID)))
  vi.mocked(connect).mockImplementation((() => ({
    promise: Promise.resolve(refusal),
    destroy: () => {},
  })) as unknown as typeof connect)
  const client = createLatch({ appId: APP_ID, modalUrl: MODAL })
  latch = client
  const iframe = document.querySelector('iframe') as HTMLIFrameElement
  window.dispatchEvent(
    new MessageEvent('message', {
      origin: MODAL,
      source: iframe.contentWindow,
      data: { namespace: 'penpal', type: 'SYN' },
    }),
  )
  const started = Date.now()
  const error = await client.ready.then(
    () => null,
    (e: unknown) => e,
  )
  expect(Date.now() - started).toBeLessThan(3000)
  expect(error).toBeInstanceOf(LatchError)
  expect((error as LatchError).code).toBe('origin_not_allowed')
  expect((error as LatchError).message).toContain('https://new.example')
  expect((error as LatchError).details).toBe(
    `Add it on the Latch server, then reload the page: npm run latch -- apps update ${APP_ID} --add-origin https://new.example`,
  )
  for (const call of [
    () => client.login(),
    () => client.getUser(),
    () => client.signMessage('x'),
  ]) {
    await expect(call()).rejects.toMatchObject({ code: 'origin_not_allowed' })
  }
  expect(dialog().open).toBe(false)
})
