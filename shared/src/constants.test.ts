import { describe, expect, test } from 'vitest'
import {
  LOGIN_METHOD_FLAGS,
  LOGIN_METHODS,
  loginMethodFlags,
  SERVER_DEFAULT_LOGIN_METHODS,
  splitLoginMethods,
} from './constants.ts'

describe('login method flags', () => {
  test('behavior: splitLoginMethods keeps the known names in order and names the unknown ones', () => {
    expect(splitLoginMethods(' email, google ,,sms')).toEqual({
      methods: ['email', 'google', 'sms'],
      unknown: [],
    })
    expect(splitLoginMethods('email,fax,Email')).toEqual({
      methods: ['email'],
      unknown: ['fax', 'Email'],
    })
    expect(splitLoginMethods('')).toEqual({ methods: [], unknown: [] })
  })

  test('behavior: each login method has its own server flag, and every flag has a method', () => {
    const flags = LOGIN_METHODS.map((m) => LOGIN_METHOD_FLAGS[m])
    expect(new Set(flags).size).toBe(LOGIN_METHODS.length)
    expect([...flags].sort()).toEqual(Object.keys(SERVER_DEFAULT_LOGIN_METHODS).sort())
    expect(LOGIN_METHOD_FLAGS.email).toBe('emailAuth')
    expect(LOGIN_METHOD_FLAGS.github).toBe('githubOAuth')
  })

  test('behavior: loginMethodFlags sets every flag from its method, and only those', () => {
    const flags = loginMethodFlags((m) => m === 'sms' || m === 'apple')
    expect(flags).toEqual({
      walletAuth: false,
      emailAuth: false,
      smsAuth: true,
      googleOAuth: false,
      twitterOAuth: false,
      discordOAuth: false,
      githubOAuth: false,
      appleOAuth: true,
      passkeyAuth: false,
    })
  })
})
