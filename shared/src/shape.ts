/**
 * Shapes: a small validator for the payloads the modal checks on its way to the first screen
 * (the host's configuration at `init`, an OAuth return) and for the host's unlink targets.
 *
 * Why not zod/mini, as the other frame payloads: on a phone's first open the modal's landing
 * paid zod's 21 KB of code and the construction of its schemas at module evaluation (~12 ms of
 * a 4x-throttled main thread the host page shares) for one `safeParse`. A shape is a plain
 * function; building one costs a closure.
 *
 * The semantics follow zod's where the two meet: objects keep the keys they name and drop the
 * rest, `optional` lets a key be absent (or undefined), `nullish` null too; every issue is
 * collected, in the order of the shape's keys; the messages are worded as zod's English ones
 * ('Invalid input: expected string, received number', 'Too big: expected string to have
 * <=1000 characters', 'Invalid option: expected one of "a"|"b"').
 */

export type IssuePath = (string | number)[]

export interface ShapeIssue {
  path: IssuePath
  message: string
}

export type ShapeResult<T> =
  | { success: true; data: T; error?: undefined }
  | { success: false; data?: undefined; error: { issues: ShapeIssue[] } }

/** A checker: answers the checked value, or records issues and answers INVALID. */
type Check<T> = (input: unknown, path: IssuePath, issues: ShapeIssue[]) => T | typeof INVALID

const INVALID: unique symbol = Symbol('invalid')

export interface Shape<T> {
  readonly check: Check<T>
  /** The value checked (objects rebuilt with their known keys only), or every issue found. */
  safeParse(input: unknown): ShapeResult<T>
  /** Marks an object key that may be absent or undefined. */
  readonly optional?: boolean
}

function shape<T>(check: Check<T>, optional = false): Shape<T> {
  return {
    check,
    optional,
    safeParse(input) {
      const issues: ShapeIssue[] = []
      const data = check(input, [], issues)
      return data === INVALID || issues.length > 0
        ? { success: false, error: { issues } }
        : { success: true, data }
    },
  }
}

/** zod's name for the type of a value, in 'expected X, received Y'. */
function received(input: unknown): string {
  if (input === null) return 'null'
  if (Array.isArray(input)) return 'array'
  if (typeof input === 'number' && Number.isNaN(input)) return 'NaN'
  return typeof input
}

function typeIssue(
  expected: string,
  input: unknown,
  path: IssuePath,
  issues: ShapeIssue[],
): typeof INVALID {
  issues.push({ path, message: `Invalid input: expected ${expected}, received ${received(input)}` })
  return INVALID
}

export interface StringRules {
  min?: number
  max?: number
  pattern?: RegExp
  /** Another rule, with its message. */
  refine?: [(value: string) => boolean, string]
}

/** A string within `min`/`max` characters, matching `pattern` and passing `refine`. */
export function string<T extends string = string>(rules: StringRules = {}): Shape<T> {
  return shape((input, path, issues) => {
    if (typeof input !== 'string') return typeIssue('string', input, path, issues)
    const before = issues.length
    if (rules.min !== undefined && input.length < rules.min) {
      issues.push({
        path,
        message: `Too small: expected string to have >=${rules.min} characters`,
      })
    }
    if (rules.max !== undefined && input.length > rules.max) {
      issues.push({ path, message: `Too big: expected string to have <=${rules.max} characters` })
    }
    if (rules.pattern && !rules.pattern.test(input)) {
      issues.push({ path, message: `Invalid string: must match pattern ${rules.pattern}` })
    }
    if (rules.refine && !rules.refine[0](input)) issues.push({ path, message: rules.refine[1] })
    return issues.length === before ? (input as T) : INVALID
  })
}

export function boolean(): Shape<boolean> {
  return shape((input, path, issues) =>
    typeof input === 'boolean' ? input : typeIssue('boolean', input, path, issues),
  )
}

/** One of the given strings. */
export function oneOf<const V extends readonly string[]>(values: V): Shape<V[number]> {
  const message = `Invalid option: expected one of ${values.map((v) => JSON.stringify(v)).join('|')}`
  return shape((input, path, issues) => {
    if (typeof input === 'string' && (values as readonly string[]).includes(input)) {
      return input as V[number]
    }
    issues.push({ path, message })
    return INVALID
  })
}

/** The first of `options` the input passes; 'Invalid input' when it passes none. */
export function union<T>(options: Shape<T>[]): Shape<T> {
  return shape((input, path, issues) => {
    for (const option of options) {
      const tried: ShapeIssue[] = []
      const value = option.check(input, path, tried)
      if (value !== INVALID && tried.length === 0) return value
    }
    issues.push({ path, message: 'Invalid input' })
    return INVALID
  })
}

/** An array of at most `max` items, each checked by `item`. */
export function array<T>(item: Shape<T>, max: number): Shape<T[]> {
  return shape((input, path, issues) => {
    if (!Array.isArray(input)) return typeIssue('array', input, path, issues)
    const before = issues.length
    if (input.length > max) {
      issues.push({ path, message: `Too big: expected array to have <=${max} items` })
    }
    const out = input.map((value, i) => item.check(value, [...path, i], issues))
    return issues.length === before ? (out as T[]) : INVALID
  })
}

/** Any value, checked further where it is used (the host's `texts`, in the modal's i18n-load). */
export function unchecked<T>(): Shape<T> {
  return shape((input) => input as T)
}

/** The key may be absent or undefined. */
export function optional<T>(inner: Shape<T>): Shape<T | undefined> {
  return shape<T | undefined>(
    (input, path, issues) => (input === undefined ? undefined : inner.check(input, path, issues)),
    true,
  )
}

/** The key may be absent, undefined or null. */
export function nullish<T>(inner: Shape<T>): Shape<T | null | undefined> {
  return shape<T | null | undefined>(
    (input, path, issues) =>
      input === undefined || input === null ? input : inner.check(input, path, issues),
    true,
  )
}

type ShapeOf<S> = S extends Shape<infer T> ? T : never
type OptionalKeys<S> = { [K in keyof S]: S[K] extends { optional: true } ? K : never }[keyof S]
type Fields<S extends Record<string, Shape<unknown>>> = {
  [K in Exclude<keyof S, OptionalKeys<S>>]: ShapeOf<S[K]>
} & { [K in OptionalKeys<S>]?: ShapeOf<S[K]> }

/** An object with the given keys; other keys are dropped from the checked value. */
export function object<S extends Record<string, Shape<unknown>>>(
  fields: S,
): Shape<{ [K in keyof Fields<S>]: Fields<S>[K] }> {
  const entries = Object.entries(fields)
  return shape((input, path, issues) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      return typeIssue('object', input, path, issues)
    }
    const before = issues.length
    const out: Record<string, unknown> = {}
    for (const [key, field] of entries) {
      const present = Object.hasOwn(input, key)
      const value = present ? (input as Record<string, unknown>)[key] : undefined
      if (!present && field.optional) continue
      const checked = field.check(value, [...path, key], issues)
      if (checked !== INVALID) out[key] = checked
    }
    return issues.length === before ? (out as { [K in keyof Fields<S>]: Fields<S>[K] }) : INVALID
  })
}

/** A string literal. */
export function literal<const V extends string>(value: V): Shape<V> {
  return shape((input, path, issues) => {
    if (input === value) return value
    issues.push({ path, message: `Invalid input: expected ${JSON.stringify(value)}` })
    return INVALID
  })
}
