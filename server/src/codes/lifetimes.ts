import type { CodeChannel } from '@latch/shared'

/**
 * How long a code lives, per channel. Apart from codes/service.ts, so the message that carries
 * a code (delivery.ts) can name its lifetime without importing the code routes' service.
 */
export const CODE_TTL_MS: Record<CodeChannel, number> = { email: 10 * 60_000, sms: 5 * 60_000 }
