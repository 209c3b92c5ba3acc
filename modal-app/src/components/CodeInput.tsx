import { CODE_ERROR_CLEAR_DELAY_MS, ERRORS, VERIFICATION_CODE_LENGTH } from '@latch/shared'
import { useEffect, useLayoutEffect, useRef, useState } from 'react'
import { useModal } from '../hooks.ts'
import { shownError, t, tf } from '../i18n/i18n.ts'
import { clearCodeError, setCodeError, submitCode } from '../passwordless/passwordless.ts'
import { CharBoxes } from './CharBoxes.tsx'

const EMPTY = (): string[] => Array.from({ length: VERIFICATION_CODE_LENGTH }, () => '')

/**
 * Six one-character boxes. A filled set is submitted; a pasted code fills every box;
 * Backspace clears and moves back; non-numeric input shows 'Code should be numeric' and the
 * boxes are cleared after 1400 ms. A refused code empties the boxes and focuses the first; its
 * error stays until the visitor types.
 */
export function CodeInput() {
  const [digits, setDigits] = useState(EMPTY)
  const refs = useRef<(HTMLInputElement | null)[]>([])
  const code = useModal((s) => s.passwordless)
  const status = code?.status ?? 'idle'
  const notNumeric = status === 'error' && code?.error === ERRORS.code_not_numeric.message
  const locked = status === 'submitting' || status === 'success'

  // A refused code leaves the boxes, before the paint that shows the refusal: the next
  // keystroke starts a fresh entry in the first box, and the refusal stays on screen until
  // then. Left filled, each digit typed over the old ones would complete a six-digit code and
  // spend one more attempt.
  const refusals = code?.refusals ?? 0
  useLayoutEffect(() => {
    if (refusals === 0) return
    setDigits(EMPTY())
    refs.current[0]?.focus()
  }, [refusals])

  useEffect(() => {
    if (!notNumeric) return
    const timer = setTimeout(() => {
      setDigits(EMPTY())
      clearCodeError()
      refs.current[0]?.focus()
    }, CODE_ERROR_CLEAR_DELAY_MS)
    return () => clearTimeout(timer)
  }, [notNumeric])

  const update = (next: string[]): void => {
    setDigits(next)
    const joined = next.join('')
    if (/\D/.test(joined)) {
      setCodeError(ERRORS.code_not_numeric.message)
      return
    }
    clearCodeError()
    if (next.every((d) => d !== '')) void submitCode(joined)
  }

  return (
    // One field to a screen reader: the group's name, then "Digit n of 6" per box.
    <fieldset className="latch-code" data-status={status} aria-busy={status === 'submitting'}>
      <legend className="latch-visually-hidden">{t('codeLegend')}</legend>
      <CharBoxes
        chars={digits}
        onChars={update}
        onCleared={(next) => {
          setDigits(next)
          clearCodeError()
        }}
        locked={locked}
        invalid={status === 'error'}
        boxLabel={(i) => tf('digit', { n: i + 1, total: VERIFICATION_CODE_LENGTH })}
        inputMode="numeric"
        autoComplete="one-time-code"
        testId="code-input"
        refs={refs}
      />
      <p className="latch-code-status" aria-live="polite" data-testid="code-status">
        {status === 'success' ? (
          <span className="latch-success" data-testid="code-success">
            {t('success')}
          </span>
        ) : code?.error ? (
          <span className="latch-error" role="alert" data-testid="code-error">
            {shownError(code.error)}
          </span>
        ) : null}
      </p>
    </fieldset>
  )
}
