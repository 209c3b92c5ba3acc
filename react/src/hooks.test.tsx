import { act, cleanup, fireEvent, render, screen } from '@testing-library/react'
import { type ReactNode, StrictMode } from 'react'
import { afterEach, beforeEach, expect, test, vi } from 'vitest'
import { type FakeClient, fakeClient, someUser } from './test/fake-client.ts'

// The provider gets its client from the host SDK's createLatch (through the shared client
// table): each call here makes a fake and records it, so a test can count the clients a tree made.
const made: FakeClient[] = []
let nextUser: Parameters<typeof fakeClient>[0] = null
vi.mock('../../host-sdk/src/create-latch.ts', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../host-sdk/src/create-latch.ts')>()),
  createLatch: vi.fn(() => {
    const client = fakeClient(nextUser)
    made.push(client)
    return client
  }),
}))

const { LatchProvider, LatchLoginButton, useLatch, useLogin, useSendCalls, useWallet, LatchError } =
  await import('./index.ts')

const APP = 'cl0000000000000000000000a'
const MODAL = 'https://auth.example.com'
const WALLET = '0x1111111111111111111111111111111111111111'

beforeEach(() => {
  made.length = 0
  nextUser = null
})
afterEach(async () => {
  cleanup()
  // The shared client is destroyed a task after its last holder left.
  await act(() => new Promise((r) => setTimeout(r, 1)))
})

function Status() {
  const { ready, authenticated, user } = useLatch()
  const { wallet } = useWallet()
  return (
    <p data-testid="status">
      {ready ? 'ready' : 'starting'} {authenticated ? user?.id : 'signed-out'}{' '}
      {wallet?.address ?? 'no-wallet'}
    </p>
  )
}

function Login(options: Parameters<typeof useLogin>[0]) {
  const { login } = useLogin(options)
  return (
    <button type="button" onClick={login}>
      go
    </button>
  )
}

function Grab({ into }: { into: (wallet: ReturnType<typeof useWallet>) => void }) {
  into(useWallet())
  return null
}

const tree = (children: ReactNode, appId = APP) => (
  <LatchProvider appId={appId} modalUrl={MODAL}>
    {children}
  </LatchProvider>
)
const status = () => screen.getByTestId('status').textContent

async function started(client: FakeClient | undefined) {
  if (!client) throw new Error('no client was made')
  await act(async () => client.resolveReady())
  return client
}

test('behavior: the hooks re-render on the client’s events: ready once the modal is, then user, login, logout and a new wallet', async () => {
  render(tree(<Status />))
  expect(status()).toBe('starting signed-out no-wallet')
  const client = await started(made[0])
  expect(status()).toBe('ready signed-out no-wallet')
  act(() => client.emit('login', { user: someUser('alice'), isNewUser: true }))
  expect(status()).toBe('ready alice no-wallet')
  act(() => client.emit('user', someUser('alice', WALLET)))
  expect(status()).toBe(`ready alice ${WALLET}`)
  act(() => client.emit('logout', null))
  expect(status()).toBe('ready signed-out no-wallet')
})

test('behavior: a visitor signed in when the page loads is known once ready (getUser), and a user event that came first is not overwritten by it', async () => {
  nextUser = someUser('bob', WALLET)
  render(tree(<Status />))
  await started(made[0])
  expect(status()).toBe(`ready bob ${WALLET}`)
  cleanup()
  await act(() => new Promise((r) => setTimeout(r, 1)))

  nextUser = someUser('stale')
  render(tree(<Status />, 'cl0000000000000000000000b'))
  const client = made[1] as FakeClient
  act(() => client.emit('user', someUser('fresh')))
  await started(client)
  expect(status()).toBe('ready fresh no-wallet')
})

test('behavior: unmounting removes every listener the provider and hooks added, and destroys the client once nobody holds it', async () => {
  const { unmount } = render(tree(<Status />))
  const client = await started(made[0])
  expect(client.listenerCount()).toBeGreaterThan(0)
  unmount()
  expect(client.listenerCount()).toBe(0)
  expect(client.destroyed).toBe(false)
  await act(() => new Promise((r) => setTimeout(r, 1)))
  expect(client.destroyed).toBe(true)
})

test('behavior: StrictMode’s double effects make one client, which stays live', async () => {
  render(<StrictMode>{tree(<Status />)}</StrictMode>)
  await act(() => new Promise((r) => setTimeout(r, 1)))
  expect(made).toHaveLength(1)
  const client = await started(made[0])
  expect(client.destroyed).toBe(false)
  expect(status()).toBe('ready signed-out no-wallet')
  // Listeners of the first, thrown-away effect are gone: one 'user' listener is left.
  act(() => client.emit('user', someUser('carol')))
  expect(status()).toBe('ready carol no-wallet')
  expect(client.listenerCount()).toBe(3)
})

test('behavior: two providers of the same app and modal share one client; another app gets its own', async () => {
  render(
    <>
      {tree(<Status />)}
      {tree(null)}
      {tree(null, 'cl0000000000000000000000c')}
    </>,
  )
  expect(made).toHaveLength(2)
})

test('behavior: useLogin reports every completed sign-in through onComplete (the OAuth return’s event included) and a failed login() through onError, never as a rejection', async () => {
  const onComplete = vi.fn()
  const onError = vi.fn()
  render(tree(<Login onComplete={onComplete} onError={onError} />))
  const client = await started(made[0])
  const exited = LatchError.of('login_exited')
  vi.mocked(client.login).mockRejectedValueOnce(exited)
  fireEvent.click(screen.getByText('go'))
  await act(() => Promise.resolve())
  expect(onError).toHaveBeenCalledWith(exited)
  const result = { user: someUser('dave'), isNewUser: false }
  act(() => client.emit('login', result))
  expect(onComplete).toHaveBeenCalledTimes(1)
  expect(onComplete).toHaveBeenCalledWith(result)
})

test('behavior: calls before the provider started reject with modal_unreachable; after, they reach the client with their arguments', async () => {
  let captured: ReturnType<typeof useWallet> | undefined
  const { unmount } = render(
    tree(
      <Grab
        into={(w) => {
          captured = w
        }}
      />,
    ),
  )
  const client = await started(made[0])
  const wallet = captured
  if (!wallet) throw new Error('not rendered')
  void wallet.signMessage('hello', { title: 'Sign' })
  expect(client.signMessage).toHaveBeenCalledWith('hello', { title: 'Sign' })
  void wallet.create()
  expect(client.createWallet).toHaveBeenCalledTimes(1)
  unmount()
  const error = await wallet.export().catch((e: unknown) => e)
  expect(error).toBeInstanceOf(LatchError)
  expect((error as InstanceType<typeof LatchError>).code).toBe('modal_unreachable')
})

function Batch(options: Parameters<typeof useSendCalls>[0]) {
  const { sendCalls, id, status, error, pending } = useSendCalls(options)
  return (
    <>
      <button
        type="button"
        onClick={() => void sendCalls({ chainId: '0x1', calls: [{ to: WALLET, data: '0x' }] })}
      >
        send
      </button>
      <p data-testid="batch">
        {pending ? 'pending' : 'idle'} {id ?? 'no-id'} {status?.status ?? 'no-status'}{' '}
        {error?.code ?? 'no-error'}
      </p>
    </>
  )
}

test('behavior: useSendCalls sends the batch through the client, keeps its id, reads its status (wallet_getCallsStatus) until it leaves pending, and reports a refusal in error and onError, never as a rejection', async () => {
  const onSuccess = vi.fn()
  const onError = vi.fn()
  render(tree(<Batch onSuccess={onSuccess} onError={onError} pollMs={5} />))
  const client = await started(made[0])
  const ID = `0x${'ab'.repeat(32)}`
  const answers = [100, 100, 200]
  const request = vi.fn(async ({ method, params }: { method: string; params: unknown[] }) => {
    expect({ method, params }).toEqual({ method: 'wallet_getCallsStatus', params: [ID] })
    return { version: '2.0.0', id: ID, chainId: '0x1', status: answers.shift(), atomic: true }
  })
  vi.mocked(client.getEthereumProvider).mockResolvedValue({ request } as never)
  let send: (v: { id: string }) => void = () => {}
  vi.mocked(client.sendCalls).mockReturnValueOnce(new Promise((r) => (send = r)))
  const batch = () => screen.getByTestId('batch').textContent
  expect(batch()).toBe('idle no-id no-status no-error')
  fireEvent.click(screen.getByText('send'))
  expect(client.sendCalls).toHaveBeenCalledWith({
    chainId: '0x1',
    calls: [{ to: WALLET, data: '0x' }],
  })
  expect(batch()).toBe('pending no-id no-status no-error')
  await act(async () => send({ id: ID }))
  expect(onSuccess).toHaveBeenCalledWith({ id: ID })
  await vi.waitFor(() => expect(batch()).toBe(`idle ${ID} 200 no-error`))
  // Read until it left pending, then no more.
  expect(request).toHaveBeenCalledTimes(3)
  await act(() => new Promise((r) => setTimeout(r, 30)))
  expect(request).toHaveBeenCalledTimes(3)

  const refused = new LatchError({
    code: 'sponsor_budget_exhausted',
    type: 'api_error',
    message: 'This app’s budget for your network fees is used up for today',
    retryable: true,
  })
  vi.mocked(client.sendCalls).mockRejectedValueOnce(refused)
  fireEvent.click(screen.getByText('send'))
  await vi.waitFor(() => expect(batch()).toBe('idle no-id no-status sponsor_budget_exhausted'))
  expect(onError).toHaveBeenCalledWith(refused)
})

test('behavior: a client that cannot start reports its error and stays not ready', async () => {
  render(tree(<Errors />))
  const client = made[0] as FakeClient
  await act(async () => client.rejectReady(LatchError.of('modal_unreachable')))
  expect(screen.getByTestId('error').textContent).toBe('starting modal_unreachable')
})
test('behavior: a client made by another copy of the SDK (@latch/wagmi bundles its own) reports its error as it is, not as modal_unreachable', async () => {
  render(tree(<Errors />))
  const client = made[0] as FakeClient
  // The same class from another bundle: equal in shape, not `instanceof` this copy's.
  class OtherLatchError extends Error {
    override readonly name = 'LatchError'
    readonly code = 'origin_not_allowed'
    readonly type = 'api_error'
    readonly details = 'Add it on the Latch server, then reload the page: …'
    readonly retryable = false
  }
  await act(async () => client.rejectReady(new OtherLatchError('This origin is not allowed')))
  expect(screen.getByTestId('error').textContent).toBe('starting origin_not_allowed')
})
function Errors() {
  const { ready, error } = useLatch()
  return <p data-testid="error">{`${ready ? 'ready' : 'starting'} ${error?.code}`}</p>
}

test('behavior: LatchLoginButton is disabled until ready and while signed in, and opens the sign-in', async () => {
  render(tree(<LatchLoginButton>Sign in</LatchLoginButton>))
  const button = screen.getByRole('button', { name: 'Sign in' }) as HTMLButtonElement
  expect(button.disabled).toBe(true)
  const client = await started(made[0])
  expect(button.disabled).toBe(false)
  fireEvent.click(button)
  expect(client.login).toHaveBeenCalledTimes(1)
  act(() => client.emit('user', someUser('erin')))
  expect(button.disabled).toBe(true)
})

test('behavior: a hook outside <LatchProvider> says so', () => {
  vi.spyOn(console, 'error').mockImplementation(() => {})
  expect(() => render(<Status />)).toThrow('Latch hooks must be used inside <LatchProvider>')
})
