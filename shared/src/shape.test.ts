import { expect, test } from 'vitest'
import * as s from './shape.ts'

test('behavior: every issue is collected, in the order of the keys, with its path', () => {
  const shape = s.object({
    a: s.string({ min: 2 }),
    b: s.array(s.object({ c: s.string({ pattern: /^x+$/ }) }), 5),
    d: s.boolean(),
  })
  expect(shape.safeParse({ a: 'a', b: [{ c: 'x' }, { c: 'y' }], d: Number.NaN }).error).toEqual({
    issues: [
      { path: ['a'], message: 'Too small: expected string to have >=2 characters' },
      { path: ['b', 1, 'c'], message: 'Invalid string: must match pattern /^x+$/' },
      { path: ['d'], message: 'Invalid input: expected boolean, received NaN' },
    ],
  })
})

test('param: optional keys may be absent or undefined, nullish ones null too; required ones not', () => {
  const shape = s.object({ o: s.optional(s.string()), n: s.nullish(s.string()), r: s.string() })
  expect(shape.safeParse({ r: 'x' }).data).toEqual({ r: 'x' })
  expect(shape.safeParse({ r: 'x', o: undefined, n: null }).data).toEqual({
    r: 'x',
    o: undefined,
    n: null,
  })
  expect(shape.safeParse({ r: 'x', o: null }).success).toBe(false)
  expect(shape.safeParse({}).error?.issues).toEqual([
    { path: ['r'], message: 'Invalid input: expected string, received undefined' },
  ])
})

test('param: a union answers its first passing option; literals and options name what they expect', () => {
  const shape = s.union<string | boolean>([s.literal('on'), s.boolean()])
  expect(shape.safeParse('on').data).toBe('on')
  expect(shape.safeParse(false).data).toBe(false)
  expect(shape.safeParse('off').error?.issues).toEqual([{ path: [], message: 'Invalid input' }])
  expect(s.literal('on').safeParse('off').error?.issues[0]?.message).toBe(
    'Invalid input: expected "on"',
  )
  expect(s.oneOf(['a', 'b']).safeParse('c').error?.issues[0]?.message).toBe(
    'Invalid option: expected one of "a"|"b"',
  )
})

test('param: a checked object is a new object: inherited and unknown keys are not copied', () => {
  const input = Object.assign(Object.create({ inherited: 'x' }) as object, { own: 'y', more: 1 })
  const shape = s.object({ own: s.string(), inherited: s.optional(s.string()) })
  const parsed = shape.safeParse(input)
  expect(parsed.data).toEqual({ own: 'y' })
  expect(parsed.data).not.toBe(input)
})
