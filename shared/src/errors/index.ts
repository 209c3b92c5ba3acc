/**
 * One error class for all of Latch and its catalogue. An error crosses every frame boundary and
 * the HTTP API with its code, message and wait intact.
 */
export * from './catalogue.ts'
export * from './http.ts'
export * from './latch-error.ts'
export * from './oauth-display.ts'
export * from './serialize.ts'
export * from './server-catalogue.ts'
