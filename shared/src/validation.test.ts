import { describe, expect, test } from 'vitest'
import {
  backgroundColorWarning,
  colorTone,
  dialCode,
  EMAIL_AND_SMS_WARNING,
  INLINE_WITHOUT_PARENT_WARNING,
  isAppId,
  isOAuthDenial,
  validateAppId,
  validateChainId,
  validateCode,
  validateEmail,
  validateHostConfig,
  validateNewPasscode,
  validateOrigin,
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
  test('param: a national number is read as one of the chosen country; one with its + as written', () => {
    expect(validatePhone('07400 123456', 'GB')).toEqual({ ok: true, value: '+447400123456' })
    expect(validatePhone('030 901820', 'DE')).toEqual({ ok: true, value: '+4930901820' })
    expect(validatePhone('+44 7400 123456')).toEqual({ ok: true, value: '+447400123456' })
    // A British number read as American is not one.
    expect(validatePhone('07400 123456').ok).toBe(false)
    // An unknown country reads as the US.
    expect(validatePhone('415 555 2671', 'ZZ')).toEqual({ ok: true, value: '+14155552671' })
  })
  test('error: outside the US the message names no country', () => {
    expect(message(validatePhone('0740', 'GB'))).toBe('Please enter a valid phone number')
    expect(message(validatePhone('0740'))).toBe('Please enter a valid US phone number')
  })
  test('param: dialCode', () => {
    expect([dialCode('US'), dialCode('GB'), dialCode('DE'), dialCode('ZZ')]).toEqual([
      '+1',
      '+44',
      '+49',
      null,
    ])
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

describe('a new passcode', () => {
  const tooCommon = 'This passcode is too easy to guess, please choose another'
  test('error: the common weak passcodes are refused, whatever their case', () => {
    for (const weak of [
      '123456',
      '111111',
      '000000',
      'abc123',
      'ABC123',
      'qwerty',
      'QWERTY',
      '123123',
      '654321',
      'passwd',
      'PassWd',
      'a1b2c3',
      'secret',
    ]) {
      expect(message(validateNewPasscode(weak)), weak).toBe(tooCommon)
    }
  })
  test('error: the easy shapes are refused: one character, a straight run, a repeated pair or triple', () => {
    for (const weak of ['aaaaaa', 'ZZZZZZ', '234567', '987654', 'abcdef', 'UVWXYZ', 'fedcba']) {
      expect(message(validateNewPasscode(weak)), weak).toBe(tooCommon)
    }
    for (const weak of ['ababab', 'x7x7x7', 'xyzxyz', 'Q1wQ1w']) {
      expect(message(validateNewPasscode(weak)), weak).toBe(tooCommon)
    }
  })
  test('behavior: ordinary passcodes pass, and SPEC’s two messages come first', () => {
    for (const fine of ['aB3dE9', 'q3ZL9a', '1234a6', 'abcdeg', 'ab12ab', 'pass99']) {
      expect(validateNewPasscode(fine), fine).toEqual({ ok: true, value: fine })
    }
    expect(message(validateNewPasscode('12345'))).toBe(
      'Passcode must be exactly 6 letters and numbers',
    )
    expect(message(validateNewPasscode('12345!'))).toBe('Passcode can only be letters and numbers')
  })
  test('behavior: recovery’s check keeps accepting a weak passcode (an existing wallet may have one)', () => {
    expect(validatePasscode('123456')).toEqual({ ok: true, value: '123456' })
    expect(validatePasscode('qwerty').ok).toBe(true)
  })
})

describe('an origin to register', () => {
  test('behavior: an origin is answered as the browser writes it', () => {
    expect(validateOrigin('https://App.example.com:8443/')).toEqual({
      ok: true,
      value: 'https://app.example.com:8443',
    })
    expect(validateOrigin('https://app.example.com:443')).toEqual({
      ok: true,
      value: 'https://app.example.com',
    })
    for (const v of ['http://localhost:5173', 'http://127.0.0.1:3000', 'https://[::1]:8443']) {
      expect(validateOrigin(v)).toEqual({ ok: true, value: v })
    }
    expect(validateOrigin('https://bücher.example')).toEqual({
      ok: true,
      value: 'https://xn--bcher-kva.example',
    })
  })
  test.each([
    ['*', 'wildcards are refused'],
    ['https://*', 'wildcards are refused'],
    ['https://*.example.com', 'wildcards are refused'],
    ['*.example.com', 'wildcards are refused'],
    ['https://%2A.example.com', "'*.example.com' is not a host name"],
    ['https://app.example.com/login', 'a path is not allowed'],
    ['https://app.example.com//', 'a path is not allowed'],
    ['https://user:pass@app.example.com', 'a user name or password is not allowed'],
    ['https://user@app.example.com', 'a user name or password is not allowed'],
    ['https://@app.example.com', 'a user name or password is not allowed'],
    ['https://app.example.com?next=1', 'a query is not allowed'],
    ['https://app.example.com?', 'a query is not allowed'],
    ['https://app.example.com#top', 'a fragment is not allowed'],
    ['ftp://app.example.com', 'use http: or https:'],
    ['javascript:alert(1)', 'use http: or https:'],
    ['app.example.com', 'write scheme://host[:port]'],
    ['https://a_b.example.com', 'is not a host name'],
  ])('error: %s is refused (%s)', (value, why) => {
    const result = validateOrigin(value)
    expect(result.ok).toBe(false)
    expect(message(result)).toContain(why)
    expect(message(result)).toContain(`'${value}'`)
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

test('behavior: an app id is 25 letters and digits, the one check every part uses', () => {
  expect(isAppId('cl0000000000000000000000a')).toBe(true)
  expect(isAppId('ABCDEFGHIJKLMNOPQRSTUVWXY')).toBe(true)
  // 25 characters, but not all letters and digits: a path or a header could carry these.
  for (const id of [
    'cl000000000000000000000/a',
    'cl0000000000000000000000-',
    `${'a'.repeat(24)} `,
  ]) {
    expect(isAppId(id)).toBe(false)
    expect(message(validateAppId(id))).toBe('Cannot initialize the provider with an invalid app ID')
  }
  expect(isAppId('a'.repeat(26))).toBe(false)
  expect(isAppId(25)).toBe(false)
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
  test('behavior: render.inDialog false without a parent element warns that the modal stays a dialog; with one, or as a dialog, nothing', () => {
    expect(validateHostConfig({ render: { inDialog: false } }).warnings).toEqual([
      'render.inDialog is false but no render.inParentNodeId is given; the modal opens as a dialog.',
    ])
    expect(
      validateHostConfig({ render: { inDialog: false, inParentNodeId: null } }).warnings,
    ).toEqual([INLINE_WITHOUT_PARENT_WARNING])
    expect(
      validateHostConfig({ render: { inDialog: false, inParentNodeId: 'here' } }).warnings,
    ).toEqual([])
    expect(validateHostConfig({ render: { inDialog: true } }).warnings).toEqual([])
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
