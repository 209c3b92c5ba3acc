/**
 * The answer of an input check: the cleaned value, or the catalogued error to show. Below every
 * checker (validation.ts, phone.ts), so none of them imports another for it.
 */
import type { LatchError } from './errors/latch-error.ts'

export type Result<T> = { ok: true; value: T } | { ok: false; error: LatchError }

export const ok = <T>(value: T): Result<T> => ({ ok: true, value })
export const fail = <T>(error: LatchError): Result<T> => ({ ok: false, error })
