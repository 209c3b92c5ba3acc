import { describe, expect, test } from 'vitest'
import {
  API_TIMEOUT_MS,
  DARK_BACKGROUND_COLOR,
  DEFAULT_ACCENT_COLOR,
  DEFAULT_RENDER_IN_DIALOG,
  ERROR_COLOR,
  INJECTED_WALLET_WAIT_MS,
  KEY_EXPORT_MIN_DISPLAY_MS,
  LOGIN_METHOD_FLAGS,
  LOGIN_METHODS,
  loginMethodFlags,
  MOBILE_BREAKPOINT_PX,
  MODAL_FULL_HEIGHT_PX,
  MODAL_MEDIUM_MIN_HEIGHT_PX,
  MODAL_WIDTH_PX,
  PHANTOM_STILL_HERE_DELAY_MS,
  QR_DEFAULT_SIZE,
  QR_ERROR_CORRECTION,
  SERVER_DEFAULT_LOGIN_METHODS,
  SIGN_MESSAGE_MAX_HEIGHT_PX,
  SUCCESS_CLOSE_DELAY_MS,
  SUCCESS_COLOR,
  splitLoginMethods,
  WALLET_REQUEST_TIMEOUT_MS,
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

// SPEC's values written out, not read from the constants they check: a change to a constant
// then fails here, where the description's number stands beside it.
describe("SPEC's business constants, as literals", () => {
  test('param: timeouts and delays', () => {
    expect(API_TIMEOUT_MS).toBe(10_000)
    expect(WALLET_REQUEST_TIMEOUT_MS).toBe(120_000)
    expect(INJECTED_WALLET_WAIT_MS).toBe(3_000)
    expect(PHANTOM_STILL_HERE_DELAY_MS).toBe(1_000)
    expect(KEY_EXPORT_MIN_DISPLAY_MS).toBe(1_000)
    expect(SUCCESS_CLOSE_DELAY_MS).toBe(1_400)
  })
  test('param: sizes, colours and the QR code', () => {
    expect([MODAL_WIDTH_PX, MODAL_FULL_HEIGHT_PX, MODAL_MEDIUM_MIN_HEIGHT_PX]).toEqual([
      360, 620, 480,
    ])
    expect(MOBILE_BREAKPOINT_PX).toBe(440)
    expect(SIGN_MESSAGE_MAX_HEIGHT_PX).toBe(310)
    expect([DEFAULT_ACCENT_COLOR, SUCCESS_COLOR, ERROR_COLOR, DARK_BACKGROUND_COLOR]).toEqual([
      '#676FFF',
      '#51BA81',
      '#EC6351',
      '#1E1E1D',
    ])
    expect([QR_ERROR_CORRECTION, QR_DEFAULT_SIZE]).toEqual(['H', 160])
    expect(DEFAULT_RENDER_IN_DIALOG).toBe(true)
  })
})
