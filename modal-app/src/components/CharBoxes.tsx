import { type RefObject, useRef } from 'react'

export interface CharBoxesProps {
  /** One character (or '') per box. */
  chars: string[]
  /** Characters were typed or pasted: the boxes as they are now. */
  onChars(next: string[]): void
  /** Backspace cleared a box. */
  onCleared(next: string[]): void
  /** Submitting or done: the boxes are read-only and keys do nothing. */
  locked: boolean
  invalid: boolean
  /** The accessible name of box `i` (e.g. "Digit 1 of 6"). */
  boxLabel(i: number): string
  inputMode: 'numeric' | 'text'
  /** The first box's autocomplete (e.g. 'one-time-code'); the others are 'off'. */
  autoComplete?: string
  /** data-testid of box i is `${testId}-${i}`. */
  testId: string
  /** The parent's handle on the boxes (to focus one after clearing them). */
  refs?: RefObject<(HTMLInputElement | null)[]>
}

/**
 * A row of one-character boxes, as the code entry and the passcode screens use them: typing
 * moves on, a pasted (or autofilled) text fills the boxes from the one it lands in (a full
 * set always from the first), Backspace clears a box and moves back, arrows move. What the
 * characters mean is the parent's business.
 */
export function CharBoxes(props: CharBoxesProps) {
  const { chars, locked } = props
  const own = useRef<(HTMLInputElement | null)[]>([])
  const refs = props.refs ?? own
  const length = chars.length

  const focus = (i: number): void => {
    refs.current[Math.max(0, Math.min(i, length - 1))]?.focus()
  }

  /** Writes characters from box `start` on; a full-length text always starts at box 0. */
  const fill = (start: number, text: string): void => {
    const typed = [...text.replace(/\s+/g, '')]
    if (typed.length === 0) return
    const from = typed.length >= length ? 0 : start
    const next = [...chars]
    typed.slice(0, length - from).forEach((c, k) => {
      next[from + k] = c
    })
    focus(Math.min(from + typed.length, length - 1))
    props.onChars(next)
  }

  return (
    <div className="latch-code-boxes">
      {chars.map((char, i) => (
        <input
          // biome-ignore lint/suspicious/noArrayIndexKey: a box is its position: the count is fixed and boxes never move
          key={i}
          ref={(el) => {
            refs.current[i] = el
          }}
          className="latch-code-box"
          type="text"
          inputMode={props.inputMode}
          autoComplete={i === 0 && props.autoComplete ? props.autoComplete : 'off'}
          autoCapitalize="off"
          spellCheck={false}
          aria-label={props.boxLabel(i)}
          aria-invalid={props.invalid || undefined}
          data-testid={`${props.testId}-${i}`}
          data-autofocus={i === 0 ? true : undefined}
          value={char}
          readOnly={locked}
          onChange={(e) => {
            const value = e.target.value
            // A character typed over itself changes nothing. Preact calls this on every input
            // event, React only on a change; otherwise a full set after a wrong code would be
            // sent again at the first keystroke.
            if (value === char) return
            // The box holds one character: keep what was typed over the old one.
            const typed =
              value.length > 1 && char && value.startsWith(char) ? value.slice(1) : value
            if (typed.length > 1) return fill(i, typed)
            const next = [...chars]
            next[i] = typed.trim()
            focus(typed.trim() ? i + 1 : i)
            props.onChars(next)
          }}
          onPaste={(e) => {
            e.preventDefault()
            if (!locked) fill(i, e.clipboardData.getData('text').trim())
          }}
          onKeyDown={(e) => {
            if (locked) return
            if (e.key === 'Backspace') {
              e.preventDefault()
              const at = char ? i : i - 1
              if (at < 0) return
              const next = [...chars]
              next[at] = ''
              focus(i - 1)
              props.onCleared(next)
            } else if (e.key === 'ArrowLeft') {
              focus(i - 1)
            } else if (e.key === 'ArrowRight') {
              focus(i + 1)
            }
          }}
        />
      ))}
    </div>
  )
}
