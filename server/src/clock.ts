/**
 * The time and a log line: what most services take besides their data. Below context.ts, so a
 * file that needs only these does not import the type of every dependency (and, through them,
 * itself).
 */

export interface Clock {
  now(): Date
}

/** One line of server log; the caller may replace it. */
export type Log = (line: string) => void

export const systemClock: Clock = { now: () => new Date() }
