import type { User } from '@latch/shared'
import { expect, test, vi } from 'vitest'
import { createEvents } from './events.ts'

const user = { id: 'did:latch:u1' } as User

test("behavior: onSuccess hears each sign-in's 'login'; suppressSuccessCallback: true keeps it silent while 'login' listeners still hear it", () => {
  const onSuccess = vi.fn()
  const plain = createEvents({ appId: 'a', modalUrl: 'https://m.test', onSuccess })
  plain.dispatch('login', { user, isNewUser: true })
  expect(onSuccess).toHaveBeenCalledWith(user, true)

  const quiet = vi.fn()
  const listener = vi.fn()
  const suppressed = createEvents({
    appId: 'a',
    modalUrl: 'https://m.test',
    onSuccess: quiet,
    suppressSuccessCallback: true,
  })
  suppressed.on('login', listener)
  suppressed.dispatch('login', { user, isNewUser: false })
  expect(quiet).not.toHaveBeenCalled()
  expect(listener).toHaveBeenCalledWith({ user, isNewUser: false })
  // false, as the README's example writes it, is the default: the callback runs.
  const explicit = vi.fn()
  createEvents({
    appId: 'a',
    modalUrl: 'https://m.test',
    onSuccess: explicit,
    suppressSuccessCallback: false,
  }).dispatch('login', { user, isNewUser: false })
  expect(explicit).toHaveBeenCalledTimes(1)
})
