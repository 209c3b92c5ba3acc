/**
 * The few members of express the tests use (express ships no types and @types/express is not
 * installed; this package types its middleware without them).
 */
declare module 'express' {
  import type { Server } from 'node:http'

  interface Application {
    get(path: string, ...handlers: ((req: never, res: never, next: never) => unknown)[]): void
    listen(port: number, host: string, callback: () => void): Server
  }
  function express(): Application
  export default express
}
