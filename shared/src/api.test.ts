import { expect, test } from 'vitest'
import { API_PREFIX, CODE_ROUTE_PATHS } from './api.ts'

test('behavior: the code routes of each channel sit at their shared paths', () => {
  expect(`${API_PREFIX}${CODE_ROUTE_PATHS.email}/init`).toBe('/api/v1/passwordless/init')
  expect(`${API_PREFIX}${CODE_ROUTE_PATHS.sms}/authenticate`).toBe(
    '/api/v1/passwordless_sms/authenticate',
  )
  expect(Object.keys(CODE_ROUTE_PATHS).sort()).toEqual(['email', 'sms'])
})
