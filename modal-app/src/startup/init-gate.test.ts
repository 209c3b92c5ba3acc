// @vitest-environment node
import { type InitResult, LatchError, type ModalMethods } from '@latch/shared'
import { describe, expect, test } from 'vitest'
import { serverConfig } from '../test/fixtures.ts'
import { holdUntilInit } from './init-gate.ts'

const INIT_RESULT: InitResult = { app: serverConfig(), warnings: [], user: null }

/** Methods that log when they run; init settles when the test says so. */
function methods() {
  const log: string[] = []
  const inits: { resolve: (r: InitResult) => void; reject: (e: unknown) => void }[] = []
  const run = (name: string) => async (): Promise<null> => {
    log.push(name)
    return null
  }
  const raw = {
    init: () => {
      log.push('init')
      return new Promise<InitResult>((resolve, reject) => inits.push({ resolve, reject }))
    },
    login: run('login'),
    getUser: run('getUser'),
    close: run('close'),
  }
  const firstSettled = { count: 0 }
  const held = holdUntilInit(raw as unknown as ModalMethods, () => {
    firstSettled.count++
  })
  return { log, inits, held, firstSettled }
}

/** Lets every settled promise's callbacks run. */
const flush = () => new Promise((resolve) => setTimeout(resolve, 0))

describe('holdUntilInit', () => {
  test('behavior: a login sent right behind init runs only once init resolved', async () => {
    const { log, inits, held } = methods()
    const init = held.init({})
    const login = held.login()
    const getUser = held.getUser()
    await flush()
    expect(log).toEqual(['init'])
    inits[0]?.resolve(INIT_RESULT)
    await expect(init).resolves.toEqual(INIT_RESULT)
    await Promise.all([login, getUser])
    expect(log).toEqual(['init', 'login', 'getUser'])
  })

  test('error: when init fails, the calls behind it fail with its error and never run', async () => {
    const { log, inits, held } = methods()
    const init = held.init({})
    const login = held.login()
    const refused = LatchError.of('no_login_method')
    inits[0]?.reject(refused)
    await expect(init).rejects.toBe(refused)
    await expect(login).rejects.toBe(refused)
    expect(log).toEqual(['init'])
  })

  test('behavior: a call that comes before any init waits for the first one', async () => {
    const { log, inits, held } = methods()
    const close = held.close()
    await flush()
    expect(log).toEqual([])
    void held.init({})
    await flush()
    expect(log).toEqual(['init'])
    inits[0]?.resolve(INIT_RESULT)
    await close
    expect(log).toEqual(['init', 'close'])
  })

  test('behavior: after a failed init, a retried init that succeeds lets later calls run', async () => {
    const { log, inits, held } = methods()
    held.init({}).catch(() => {})
    inits[0]?.reject(LatchError.of('something_went_wrong'))
    await flush()
    const retried = held.init({})
    const login = held.login()
    inits[1]?.resolve(INIT_RESULT)
    await retried
    await login
    expect(log).toEqual(['init', 'init', 'login'])
  })

  test('behavior: the first init settling is reported once, whether it failed or not', async () => {
    const failed = methods()
    failed.held.init({}).catch(() => {})
    await flush()
    expect(failed.firstSettled.count).toBe(0)
    failed.inits[0]?.reject(LatchError.of('something_went_wrong'))
    await flush()
    expect(failed.firstSettled.count).toBe(1)
    void failed.held.init({})
    failed.inits[1]?.resolve(INIT_RESULT)
    await flush()
    expect(failed.firstSettled.count).toBe(1)

    const succeeded = methods()
    void succeeded.held.init({})
    await flush()
    expect(succeeded.firstSettled.count).toBe(0)
    succeeded.inits[0]?.resolve(INIT_RESULT)
    await flush()
    expect(succeeded.firstSettled.count).toBe(1)
  })
})
