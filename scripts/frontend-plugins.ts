/** Build plugins both frontends' builds use (modal-app/build.ts, wallet-frame/build.ts). */
import { type Plugin, parseAst } from 'vite'

/**
 * Penpal's debug lines: neither frontend passes penpal a `log` function, so each `log?.(...)`
 * is a call on undefined; written as one, the minifier drops it with its strings. The build
 * fails if penpal's text no longer has them, instead of silently growing.
 */
export function penpalWithoutDebugLines(): Plugin {
  const LOG_CALL = /\b(?:this\.#)?log\?\.\(/g
  return {
    name: 'latch-penpal-without-debug-lines',
    transform(code, id) {
      if (!/[\\/]penpal[\\/]dist[\\/]penpal\.mjs$/.test(id)) return null
      if (code.search(LOG_CALL) < 0) this.error('penpal changed: no log?.( calls to drop')
      return { code: code.replace(LOG_CALL, '(void 0)?.('), map: null }
    },
  }
}

/**
 * Marks each zod call in the shared contracts (`z.object(...)`, `z.string().max(64)`) pure, so
 * unused schemas, and zod with them, drop out. Not `treeshake.manualPureFunctions: ['z']`: that
 * matches every function called z, minified dependencies included, and dropped Preact's diff
 * (an empty page).
 */
export function pureZodCalls(): Plugin {
  return {
    name: 'latch-pure-zod-calls',
    transform(code, id) {
      if (!id.includes('/shared/src/') || !code.includes('z.')) return null
      const starts = new Set<number>()
      const visit = (node: unknown): void => {
        if (Array.isArray(node)) {
          for (const child of node) visit(child)
          return
        }
        if (!node || typeof node !== 'object') return
        const n = node as { type?: string; start?: number; callee?: unknown }
        if (n.type === 'CallExpression' && rootName(n.callee) === 'z' && n.start !== undefined) {
          starts.add(n.start)
        }
        for (const value of Object.values(node))
          if (value && typeof value === 'object') visit(value)
      }
      visit(parseAst(code))
      let out = code
      for (const at of [...starts].sort((a, b) => b - a)) {
        out = `${out.slice(0, at)}/* @__PURE__ */ ${out.slice(at)}`
      }
      return { code: out, map: null }
    },
  }
}

/** The identifier a call chain starts from: z for `z.string().max(64)`. */
function rootName(node: unknown): string | null {
  const n = node as { type?: string; name?: string; object?: unknown; callee?: unknown } | null
  if (!n) return null
  if (n.type === 'Identifier') return n.name ?? null
  if (n.type === 'MemberExpression') return rootName(n.object)
  if (n.type === 'CallExpression') return rootName(n.callee)
  return null
}
