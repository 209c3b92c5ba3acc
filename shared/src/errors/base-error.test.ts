import { expect, test } from 'vitest'
import { BaseError } from './base-error.ts'

class ExampleError extends BaseError {
  override readonly name = 'ExampleError'
}

test('behavior: a BaseError keeps its class name, its short message as the message, its details and its cause', () => {
  const cause = new Error('socket hang up')
  const error = new ExampleError('The endpoint did not answer', {
    details: 'after 3 attempts',
    cause,
  })
  expect(error).toBeInstanceOf(Error)
  expect(error).toMatchObject({
    name: 'ExampleError',
    message: 'The endpoint did not answer',
    shortMessage: 'The endpoint did not answer',
    details: 'after 3 attempts',
    cause,
  })
  expect(String(error)).toBe('ExampleError: The endpoint did not answer')
  expect(new ExampleError('Bare')).toMatchObject({ details: undefined })
  expect('cause' in new ExampleError('Bare')).toBe(false)
})
