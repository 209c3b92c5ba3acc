import { describe, expect, test } from 'vitest'
import { apiUrlFromMeta, appIdFromHash, isAllowedOrigin, parentOrigin } from './origin.ts'

function framedWindow(opts: { ancestors?: string[]; referrer?: string }): Window {
  const parent = {} as Window
  const win = {
    parent,
    location: { ancestorOrigins: opts.ancestors, hash: '' },
    document: { referrer: opts.referrer ?? '' },
  }
  return win as unknown as Window
}

describe('parentOrigin', () => {
  test('behavior: the immediate ancestor origin first', () => {
    const win = framedWindow({
      ancestors: ['http://localhost:5173', 'https://top.test'],
      referrer: 'https://other.test/x',
    })
    expect(parentOrigin(win)).toBe('http://localhost:5173')
  })

  test('behavior: the referrer origin where ancestorOrigins is missing', () => {
    expect(parentOrigin(framedWindow({ referrer: 'http://localhost:5173/demo?x=1' }))).toBe(
      'http://localhost:5173',
    )
  })

  test('behavior: not framed, or nothing to go by, answers null', () => {
    expect(parentOrigin(window)).toBeNull()
    expect(parentOrigin(framedWindow({}))).toBeNull()
    expect(parentOrigin(framedWindow({ referrer: 'not a url' }))).toBeNull()
  })
})

describe('isAllowedOrigin', () => {
  const allowed = ['http://localhost:5173', 'https://app.acme.test/']

  test('behavior: exact scheme, host and port', () => {
    expect(isAllowedOrigin('http://localhost:5173', allowed)).toBe(true)
    expect(isAllowedOrigin('https://app.acme.test', allowed)).toBe(true)
  })

  test('error: anything else is refused', () => {
    expect(isAllowedOrigin('http://localhost:5174', allowed)).toBe(false)
    expect(isAllowedOrigin('https://localhost:5173', allowed)).toBe(false)
    expect(isAllowedOrigin('http://127.0.0.1:5173', allowed)).toBe(false)
    expect(isAllowedOrigin('https://evil.app.acme.test', allowed)).toBe(false)
    expect(isAllowedOrigin('null', allowed)).toBe(false)
    expect(isAllowedOrigin(null, allowed)).toBe(false)
    expect(isAllowedOrigin('http://localhost:5173', [])).toBe(false)
    expect(isAllowedOrigin('http://localhost:5173', ['*'])).toBe(false)
  })
})

test('behavior: app id from the fragment, API URL from the meta tag', () => {
  expect(appIdFromHash('#app=clx0000000000000000000001')).toBe('clx0000000000000000000001')
  expect(appIdFromHash('')).toBeNull()
  expect(appIdFromHash('#other=1')).toBeNull()
  const doc = document.implementation.createHTMLDocument('x')
  expect(apiUrlFromMeta(doc)).toBeNull()
  const meta = doc.createElement('meta')
  meta.name = 'latch-api-url'
  meta.content = ' http://127.0.0.1:8787 '
  doc.head.append(meta)
  expect(apiUrlFromMeta(doc)).toBe('http://127.0.0.1:8787')
})
