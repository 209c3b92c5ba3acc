import { LatchError } from '@latch/shared'
import pg from 'pg'
import { expect, test } from 'vitest'
import { DatabaseBusyError, DatabaseUnreachableError, databaseUnavailable } from './unavailable.ts'

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code })
const serverError = (code: string) => {
  const e = new pg.DatabaseError('terminating connection due to administrator command', 0, 'error')
  e.code = code
  e.severity = 'FATAL'
  return e
}

test('behavior: a connection the server ended, one that would not open, or the pool busy past its bound is the database out of reach', () => {
  for (const code of ['57P01', '57P02', '57P03', '53300', '08006', '08003']) {
    expect(databaseUnavailable(serverError(code))).toBe('lost')
  }
  expect(databaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe('lost')
  expect(
    databaseUnavailable(
      new Error('Client has encountered a connection error and is not queryable'),
    ),
  ).toBe('lost')
  expect(databaseUnavailable(withCode('read ECONNRESET', 'ECONNRESET'))).toBe('lost')
  expect(databaseUnavailable(new DatabaseUnreachableError('no connection'))).toBe('lost')
  expect(databaseUnavailable(new Error('timeout exceeded when trying to connect'))).toBe('busy')
  expect(databaseUnavailable(new DatabaseBusyError('100 wait'))).toBe('busy')
  // Wrapped in an internal error, it is still the database.
  const wrapped = LatchError.of('internal_error', { cause: serverError('57P01') })
  expect(databaseUnavailable(wrapped)).toBe('lost')
})

test('behavior: a statement the database refused, and a provider out of reach, are not the database out of reach', () => {
  // A unique violation, a statement timeout, a serialization failure: answers of a live server.
  for (const code of ['23505', '57014', '40001', '22P02']) {
    expect(databaseUnavailable(serverError(code))).toBeNull()
  }
  // fetch's failure to an OAuth provider or an RPC carries the socket code one level down.
  const fetchFailed = new TypeError('fetch failed', {
    cause: withCode('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'),
  })
  expect(databaseUnavailable(fetchFailed)).toBeNull()
  expect(
    databaseUnavailable(
      LatchError.of('internal_error', { cause: withCode('connect ECONNREFUSED', 'ECONNREFUSED') }),
    ),
  ).toBeNull()
  expect(databaseUnavailable(new Error('boom'))).toBeNull()
  expect(databaseUnavailable(undefined)).toBeNull()
})
