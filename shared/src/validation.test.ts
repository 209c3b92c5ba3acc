import { describe, expect, test } from 'vitest'
import {
  backgroundColorWarning,
  colorTone,
  EMAIL_AND_SMS_WARNING,
  isOAuthDenial,
  validateAppId,
  validateChainId,
  validateCode,
  validateEmail,
  validateHostConfig,
  validatePasscode,
  validatePhone,
  validateSignMessage,
  validateTransactionRequest,
} from './validation.ts'

function message(result: { ok: boolean; error?: { message: string } }): string | undefined {
  return result.ok ? undefined : result.error?.message
}

describe('email', () => {
  test('behavior: trims and lowercases', () => {
    expect(validateEmail('  Ada@Example.COM ')).toEqual({ ok: true, value: 'ada@example.com' })
  })
  test.each(['', 'ada', 'ada@', '@example.com', 'ada@example', 'a da@example.com', 'a@b.c'])(
    'error: %j',
    (input) => {
      expect(validateEmail(input).ok).toBe(false)
    },
  )
})

describe('phone', () => {
  test('behavior: a US number becomes E.164', () => {
    expect(validatePhone('(415) 555-2671')).toEqual({ ok: true, value: '+14155552671' })
    expect(validatePhone('415 555 2671')).toEqual({ ok: true, value: '+14155552671' })
  })
  test('error: too short or not a number', () => {
    expect(validatePhone('555 55').ok).toBe(false)
    expect(validatePhone('hello').ok).toBe(false)
  })
})

describe('verification code', () => {
  test('behavior: six digits, trimmed', () => {
    expect(validateCode(' 012345 ')).toEqual({ ok: true, value: '012345' })
  })
  test('error: non-numeric input', () => {
    expect(message(validateCode('12a456'))).toBe('Code should be numeric')
  })
  test('error: too short', () => {
    expect(validateCode('12345').ok).toBe(false)
  })
})

describe('passcode', () => {
  test('behavior: letters and digits', () => {
    expect(validatePasscode('aB3dE9').ok).toBe(true)
  })
  test('error: other characters', () => {
    expect(message(validatePasscode('ab-123'))).toBe('Passcode can only be letters and numbers')
  })
  test('error: wrong length', () => {
    expect(message(validatePasscode('abc12'))).toBe(
      'Passcode must be exactly 6 letters and numbers',
    )
    expect(message(validatePasscode('abc1234'))).toBe(
      'Passcode must be exactly 6 letters and numbers',
    )
  })
})

test('behavior: the literal code undefined is a denial', () => {
  expect(isOAuthDenial('undefined')).toBe(true)
  expect(isOAuthDenial('abc')).toBe(false)
  expect(isOAuthDenial(undefined)).toBe(false)
})

test('behavior: chain ids', () => {
  expect(validateChainId(1).ok).toBe(true)
  expect(validateChainId(84531).ok).toBe(true)
  expect(message(validateChainId(31337))).toBe('Unsupported chainId')
  expect(message(validateChainId('1'))).toBe('Unsupported chainId')
})

test('behavior: app ids are exactly 25 characters', () => {
  expect(validateAppId('a'.repeat(25)).ok).toBe(true)
  expect(message(validateAppId('a'.repeat(24)))).toBe(
    'Cannot initialize the provider with an invalid app ID',
  )
  expect(validateAppId(undefined).ok).toBe(false)
})

test('behavior: sign message', () => {
  expect(validateSignMessage('hi').ok).toBe(true)
  expect(message(validateSignMessage(''))).toBe('Message must be a non-empty string')
  expect(message(validateSignMessage(42))).toBe('Message must be a non-empty string')
})

describe('host configuration', () => {
  test('behavior: e-mail with SMS disables SMS with a warning', () => {
    const { config, warnings } = validateHostConfig({ loginMethods: ['email', 'sms', 'google'] })
    expect(config.loginMethods).toEqual(['email', 'google'])
    expect(warnings).toEqual([EMAIL_AND_SMS_WARNING])
  })
  test('error: social without e-mail or SMS', () => {
    expect(() => validateHostConfig({ loginMethods: ['wallet', 'google'] })).toThrow(
      'To enable social logins you must also enable either SMS or Email login',
    )
  })
  test('error: no login method', () => {
    expect(() => validateHostConfig({ loginMethods: [] })).toThrow(
      'You must enable at least one login method',
    )
  })
  test('behavior: a mid-grey background warns, light and dark do not', () => {
    expect(validateHostConfig({ appearance: { theme: '#777777' } }).warnings).toEqual([
      backgroundColorWarning('#777777'),
    ])
    expect(validateHostConfig({ appearance: { theme: '#FAFAFA' } }).warnings).toEqual([])
    expect(validateHostConfig({ appearance: { theme: '#1E1E1D' } }).warnings).toEqual([])
    expect(colorTone('#fff')).toBe('light')
    expect(colorTone('#000')).toBe('dark')
    expect(colorTone('not-a-colour')).toBeUndefined()
  })
})

describe('transaction request', () => {
  test('behavior: numbers, bigints and hex strings', () => {
    expect(
      validateTransactionRequest({ value: 1n, gasLimit: 21000, gasPrice: '0x3b9aca00', chainId: 1 })
        .ok,
    ).toBe(true)
  })
  test('error: a decimal string value', () => {
    const result = validateTransactionRequest({ value: '100' as `0x${string}` })
    expect(message(result)).toBe(
      'Invalid transaction request: value must be a number, bigint or hex string',
    )
  })
  test('error: chainId not a number', () => {
    const result = validateTransactionRequest({ chainId: '1' as unknown as number })
    expect(message(result)).toBe('Invalid transaction request: chainId must be a number')
  })
})
