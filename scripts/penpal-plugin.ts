/**
 * The frontends' builds (modal-app/build.ts, wallet-frame/build.ts) leave penpal's debug lines
 * out: neither passes penpal a `log` function, so each `log?.(...)` is a call on undefined;
 * written as one, the minifier drops it with its strings. The build fails if penpal's text no
 * longer has them, instead of silently growing.
 */
import type { Plugin } from 'vite'

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
