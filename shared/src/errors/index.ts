/**
 * One error class for all of Latch and its catalogue (LatchError): an error crosses every frame
 * boundary and the HTTP API with its code, message and wait intact. Errors outside the
 * catalogue (a refused configuration, a CLI's usage, a webhook that does not verify) extend
 * BaseError.
 */
export * from './base-error.ts'
export * from './catalogue.ts'
export * from './http.ts'
export * from './latch-error.ts'
export * from './oauth-display.ts'
export * from './serialize.ts'
export * from './server-catalogue.ts'
