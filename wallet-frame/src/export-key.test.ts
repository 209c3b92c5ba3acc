// @vitest-environment node
import { expect, test } from 'vitest'
import { EXPORT_WIDTH, parseExportQuery } from './export-key.ts'

const address = `0x${'aB'.repeat(20)}`

test('behavior: the export query gives the address, the width (320 by default) and the theme colours', () => {
  expect(parseExportQuery(new URLSearchParams({ address }))).toEqual({
    ok: true,
    value: { address, width: EXPORT_WIDTH.default },
  })
  expect(
    parseExportQuery(
      new URLSearchParams({
        address,
        width: '400',
        background: '#000',
        foreground: '#FFFFFF',
        accent: '#5f66eb',
        accentForeground: '#fff',
      }),
    ),
  ).toEqual({
    ok: true,
    value: {
      address,
      width: 400,
      background: '#000',
      foreground: '#FFFFFF',
      accent: '#5f66eb',
      accentForeground: '#fff',
    },
  })
})

test('refusal: a token in the URL, a bad address, width or colour each get their own message', () => {
  const cases: [Record<string, string>, string][] = [
    [{ address, token: 'a.b.c' }, 'The access token is not accepted in the URL'],
    [{ address, accessToken: 'a.b.c' }, 'The access token is not accepted in the URL'],
    [{}, 'address must be a 0x address of 40 hex digits'],
    [{ address: `${address}0` }, 'address must be a 0x address of 40 hex digits'],
    [{ address: address.replace('0x', '') }, 'address must be a 0x address of 40 hex digits'],
    [{ address, width: '239' }, 'width must be a whole number from 240 to 640'],
    [{ address, width: '641' }, 'width must be a whole number from 240 to 640'],
    [{ address, width: '3.5e2' }, 'width must be a whole number from 240 to 640'],
    [{ address, width: '' }, 'width must be a whole number from 240 to 640'],
    [{ address, background: 'red' }, 'background must be a colour as #rgb or #rrggbb'],
    [{ address, foreground: '#12345' }, 'foreground must be a colour as #rgb or #rrggbb'],
    [{ address, accent: '#fff;x:y' }, 'accent must be a colour as #rgb or #rrggbb'],
    [
      { address, accentForeground: 'url(x)' },
      'accentForeground must be a colour as #rgb or #rrggbb',
    ],
  ]
  for (const [query, message] of cases) {
    const parsed = parseExportQuery(new URLSearchParams(query))
    expect(parsed.ok, JSON.stringify(query)).toBe(false)
    if (!parsed.ok) {
      expect(parsed.error.code).toBe('invalid_request_arguments')
      expect(parsed.error.message).toBe(message)
    }
  }
})

test('param: the visitor locale, one Latch ships, else refused', () => {
  expect(parseExportQuery(new URLSearchParams({ address, locale: 'ja' }))).toEqual({
    ok: true,
    value: { address, width: EXPORT_WIDTH.default, locale: 'ja' },
  })
  const refused = parseExportQuery(new URLSearchParams({ address, locale: 'xx' }))
  expect(refused.ok ? null : refused.error.message).toMatch(/^locale must be one of en, es, /)
})
