/** Method wrappers that carry LatchErrors across postMessage, for every penpal connection. */
import { deserializeError, serializeError } from './errors/serialize.ts'

type AsyncMethods = Record<string, (...args: never[]) => Promise<unknown>>

/**
 * Wraps methods to expose so that any failure crosses postMessage as a serialized LatchError.
 * @example connect({ messenger, methods: exposeMethods(modalMethods) })
 */
export function exposeMethods<M extends object>(methods: M): M {
  const out: Record<string, unknown> = {}
  for (const [name, fn] of Object.entries(methods as AsyncMethods)) {
    out[name] = async (...args: never[]) => {
      try {
        return await fn(...args)
      } catch (e) {
        throw serializeError(e)
      }
    }
  }
  return out as M
}

/** The other side of exposeMethods: a remote whose rejections are LatchErrors again. */
export function remoteMethods<M extends object>(remote: object): M {
  return new Proxy(
    {},
    {
      get(_target, name) {
        // The proxy must not look like a promise when it is awaited or returned.
        if (typeof name !== 'string' || name === 'then') return undefined
        return async (...args: unknown[]) => {
          const fn = (remote as Record<string, (...a: unknown[]) => Promise<unknown>>)[name]
          if (typeof fn !== 'function') throw deserializeError(undefined)
          try {
            return await fn(...args)
          } catch (e) {
            throw deserializeError(e)
          }
        }
      },
    },
  ) as M
}
