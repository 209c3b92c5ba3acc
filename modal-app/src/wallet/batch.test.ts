/**
 * The sponsor's refusals of a batch as the send screen shows them (batch.tsx): each in every
 * shipped language, the server's reason under those that name what was refused.
 */
import { type ErrorCode, LatchError } from '@latch/shared'
import { en, LOCALES } from '@latch/shared/i18n'
import { TABLES } from '@latch/shared/i18n/all'
import { enScreens } from '@latch/shared/i18n/screens'
import { afterEach, expect, test } from 'vitest'
import { setTable } from '../i18n/i18n.ts'
import { refusalText } from './batch.tsx'

afterEach(() => setTable({ ...enScreens, ...en }, 'en'))

const refusal = (code: ErrorCode, message: string) =>
  new LatchError({ code, type: 'api_error', message, retryable: false })

const REASON =
  'Call 2 is to 0x00000000000000000000000000000000000000aa, a contract the app does not pay for'

test('behavior: each sponsor refusal shows in every shipped language, saying nothing was sent; the reasons naming what was refused follow as the server wrote them', () => {
  const cases = [
    ['sponsor_budget_exhausted', 'batchBudget', false],
    ['sponsor_out_of_funds', 'batchNoFunds', false],
    ['sponsor_policy_refused', 'batchPolicy', true],
    ['sponsor_unavailable', 'batchUnavailable', true],
    ['batch_reverted', 'batchReverted', true],
  ] as const
  for (const l of LOCALES) {
    const table: Record<string, string> = l === 'en' ? { ...enScreens, ...en } : TABLES[l].m
    setTable(table, l)
    for (const [code, key, detailed] of cases) {
      const shown = refusalText(refusal(code, REASON), 'fallback')
      expect(shown.text, `${l} ${code}`).toBe(table[key])
      if (l !== 'en') expect(shown.text, `${l} ${code}`).not.toBe(enScreens[key])
      expect(shown.detail).toBe(detailed ? REASON : undefined)
    }
  }
})

test('behavior: any other failure of the batch shows the text the screen was given', () => {
  setTable({ ...enScreens, ...en }, 'en')
  expect(
    refusalText(refusal('batch_invalid', 'The batch is not signed by the wallet’s key'), 'x'),
  ).toEqual({ text: 'x' })
})
