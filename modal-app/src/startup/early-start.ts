/** The inline script of the modal page's head (build.ts bundles and inlines this file). */
import { type ClientConstants, startEarlyConfig } from './early.ts'

/** Replaced at build time with the values of @latch/shared. */
declare const __LATCH_CLIENT__: ClientConstants

startEarlyConfig(window, __LATCH_CLIENT__)
