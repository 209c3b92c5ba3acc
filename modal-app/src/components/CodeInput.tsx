import { CODE_ERROR_CLEAR_DELAY_MS, ERRORS, VERIFICATION_CODE_LENGTH } from '@latch/shared'
import { useEffect, useRef, useState } from 'react'
import { useModal } from '../hooks.ts'
import { clearCodeError, setCodeError, submitCode } from '../passwordless.ts'

const EMPTY = (): string[] => Array.from({ length: VERIFICATION_CODE_LENGTH }, () => '')

/**
 * Six one-character boxes. A filled set is submitted; a pasted code fills every box;
 * Backspace clears and moves back; non-numeric input shows 'Code should be numeric' and the
 * boxes are cleared after 1400 ms.
 */
export function CodeInput() {
  const [digits, setDigits] = useState(EMPTY)
  const refs = useRef<(HTMLInputElement | null)[]>([])
  const code = useModal((s) => s.passwordless)
  const status = code?.status ?? 'idle'
  const notNumeric = status === 'error' && code?.error === ERRORS.code_not_numeric.message
  const locked = status === 'submitting' || status === 'success'

  useEffect(() => {
    if (!notNumeric) return
    const timer = setTimeout(() => {
      setDigits(EMPTY())
      clearCodeError()
      refs.current[0]?.focus()
    }, CODE_ERROR_CLEAR_DELAY_MS)
    return () => clearTimeout(timer)
  }, [notNumeric])

  const focus = (i: number): void => {
    refs.current[Math.max(0, Math.min(i, VERIFICATION_CODE_LENGTH - 1))]?.focus()
  }

  const update = (next: string[], focusAt: number): void => {
    setDigits(next)
    focus(focusAt)
    const joined = next.join('')
    if (/\D/.test(joined)) {
      setCodeError(ERRORS.code_not_numeric.message)
      return
    }
    clearCodeError()
    if (next.every((d) => d !== '')) void submitCode(joined)
  }

  /** Writes characters from box `start` on; a full-length code always starts at box 0. */
  const fill = (start: number, text: string): void => {
    const chars = [...text.replace(/\s+/g, '')]
    if (chars.length === 0) return
    const from = chars.length >= VERIFICATION_CODE_LENGTH ? 0 : start
    const next = [...digits]
    chars.slice(0, VERIFICATION_CODE_LENGTH - from).forEach((c, k) => {
      next[from + k] = c
    })
    update(next, Math.min(from + chars.length, VERIFICATION_CODE_LENGTH - 1))
  }

  return (
    // One field to a screen reader: the group's name, then "Digit n of 6" per box.
    <fieldset className="latch-code" data-status={status} aria-busy={status === 'submitting'}>
      <legend className="latch-visually-hidden">Confirmation code</legend>
      <div className="latch-code-boxes">
        {digits.map((digit, i) => (
          <input
            key={i}
            ref={(el) => {
              refs.current[i] = el
            }}
            className="latch-code-box"
            type="text"
            inputMode="numeric"
            autoComplete={i === 0 ? 'one-time-code' : 'off'}
            aria-label={`Digit ${i + 1} of ${VERIFICATION_CODE_LENGTH}`}
            aria-invalid={status === 'error' || undefined}
            data-testid={`code-input-${i}`}
            data-autofocus={i === 0 ? true : undefined}
            value={digit}
            readOnly={locked}
            onChange={(e) => {
              const value = e.target.value
              // A digit typed over itself changes nothing. Preact calls this on every input
              // event, React only on a change; otherwise a full set after a wrong code would
              // be sent again at the first keystroke.
              if (value === digit) return
              // The box holds one character: keep what was typed over the old one.
              const typed =
                value.length > 1 && digit && value.startsWith(digit) ? value.slice(1) : value
              if (typed.length > 1) return fill(i, typed)
              const next = [...digits]
              next[i] = typed.trim()
              update(next, typed.trim() ? i + 1 : i)
            }}
            onPaste={(e) => {
              e.preventDefault()
              if (!locked) fill(i, e.clipboardData.getData('text').trim())
            }}
            onKeyDown={(e) => {
              if (locked) return
              if (e.key === 'Backspace') {
                e.preventDefault()
                const next = [...digits]
                const at = digit ? i : i - 1
                if (at < 0) return
                next[at] = ''
                setDigits(next)
                clearCodeError()
                focus(i - 1)
              } else if (e.key === 'ArrowLeft') {
                focus(i - 1)
              } else if (e.key === 'ArrowRight') {
                focus(i + 1)
              }
            }}
          />
        ))}
      </div>
      <p className="latch-code-status" aria-live="polite" data-testid="code-status">
        {status === 'success' ? (
          <span className="latch-success" data-testid="code-success">
            Success!
          </span>
        ) : code?.error ? (
          <span className="latch-error" role="alert" data-testid="code-error">
            {code.error}
          </span>
        ) : null}
      </p>
    </fieldset>
  )
}
