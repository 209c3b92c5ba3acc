import { ERRORS, isWeakPasscode, PASSCODE_LENGTH } from '@latch/shared'
import { useState } from 'react'
import { shownError, t, tf } from '../i18n/i18n.ts'
import { CharBoxes } from './CharBoxes.tsx'

export const emptyPasscode = (): string[] => Array.from({ length: PASSCODE_LENGTH }, () => '')

const ALLOWED = /^[A-Za-z0-9]*$/

/** Six letters and digits, one per box. */
export function isValidPasscode(chars: string[]): boolean {
  return chars.every((c) => c.length === 1) && ALLOWED.test(chars.join(''))
}

/**
 * The validation text for the boxes (docs/behaviour.md, "Input rules"): a character that is not a
 * letter or a digit at once; an incomplete passcode only once the visitor left the boxes (`left`),
 * not while typing its first characters. With `refuseWeak` (a passcode being chosen, never one
 * entered to recover), a complete passcode on the common weak list as soon as it is typed.
 */
export function passcodeProblem(chars: string[], left: boolean, refuseWeak = false): string | null {
  const joined = chars.join('')
  if (!ALLOWED.test(joined)) return ERRORS.passcode_invalid_characters.message
  if (left && joined.length > 0 && !isValidPasscode(chars)) {
    return ERRORS.passcode_invalid_length.message
  }
  if (refuseWeak && isValidPasscode(chars) && isWeakPasscode(joined)) {
    return ERRORS.passcode_too_common.message
  }
  return null
}

/**
 * The state of a passcode entry: the boxes, whether they hold a valid passcode, the validation
 * text, and the handlers PasscodeInput takes (`input`). `refuseWeak` for a passcode being chosen
 * (the create screen): a weak one is then not valid and says so (@latch/shared isWeakPasscode,
 * which the wallet frame checks again before it uses the passcode).
 */
export function usePasscode({ refuseWeak = false }: { refuseWeak?: boolean } = {}) {
  const [chars, setChars] = useState(emptyPasscode)
  const [left, setLeft] = useState(false)
  const problem = passcodeProblem(chars, left, refuseWeak)
  return {
    passcode: chars.join(''),
    valid: isValidPasscode(chars) && problem === null,
    problem,
    input: {
      chars,
      onChars: (next: string[]) => {
        setChars(next)
        // A complete passcode forgets that the boxes were left incomplete.
        if (isValidPasscode(next)) setLeft(false)
      },
      onLeave: () => setLeft(true),
    },
  }
}

export interface PasscodeInputProps {
  chars: string[]
  onChars(next: string[]): void
  /** The visitor left the boxes (focus went elsewhere in the modal). */
  onLeave?(): void
  locked: boolean
  /** The validation text or the submit's error; null shows the hint. */
  error: string | null
  legend: string
  testId?: string
}

/**
 * The passcode's six boxes with their legend and one live line under them: the hint, or the
 * validation or submit error (announced as an alert).
 */
export function PasscodeInput(props: PasscodeInputProps) {
  const testId = props.testId ?? 'passcode-input'
  return (
    <fieldset
      className="latch-code"
      data-status={props.error ? 'error' : 'idle'}
      onBlur={(e) => {
        const next = e.relatedTarget
        if (!(next instanceof Node && e.currentTarget.contains(next))) props.onLeave?.()
      }}
    >
      <legend className="latch-visually-hidden">{props.legend}</legend>
      <CharBoxes
        chars={props.chars}
        onChars={props.onChars}
        onCleared={props.onChars}
        locked={props.locked}
        invalid={props.error !== null}
        boxLabel={(i) => tf('char', { n: i + 1, total: PASSCODE_LENGTH })}
        inputMode="text"
        testId={testId}
      />
      <p className="latch-code-status" aria-live="polite" data-testid={`${testId}-status`}>
        {props.error ? (
          <span className="latch-error" role="alert" data-testid={`${testId}-error`}>
            {shownError(props.error)}
          </span>
        ) : (
          <span className="latch-helper">{t('hint')}</span>
        )}
      </p>
    </fieldset>
  )
}
