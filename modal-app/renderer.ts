/**
 * Which renderer the modal is built with. The source, zustand and the testing library are
 * written against React's API; React DOM renders them unless the build is asked for Preact
 * (`LATCH_MODAL_RENDERER=preact`), which these aliases hand them instead through preact/compat:
 * the same components in a third of the bytes, for those who want the smallest modal
 * (docs/architecture.md, "The renderer").
 *
 * One choice for the build (build.ts), the e2e frontend build (e2e/src/build.ts) and the
 * benchmark, read from one place, so a misspelt value fails instead of silently building the
 * other renderer. The modal-app unit tests run React (vite.config.ts); the Preact build is kept
 * working by size.test.ts and one e2e sign-in on it (e2e/src/preact-build.spec.ts).
 */
export type ModalRenderer = 'react' | 'preact'

export const MODAL_RENDERERS: readonly ModalRenderer[] = ['react', 'preact']

/** The environment variable that picks the renderer of a build; React when unset or empty. */
export const RENDERER_ENV = 'LATCH_MODAL_RENDERER'

export function modalRenderer(env: NodeJS.ProcessEnv = process.env): ModalRenderer {
  const value = env[RENDERER_ENV]?.trim().toLowerCase()
  if (!value) return 'react'
  if (value === 'react' || value === 'preact') return value
  throw new Error(`${RENDERER_ENV} must be react or preact, not ${JSON.stringify(value)}`)
}

/** What the Preact build resolves React's entry points to. */
export const PREACT_ALIASES: { find: RegExp; replacement: string }[] = [
  { find: /^react$/, replacement: 'preact/compat' },
  { find: /^react\/jsx-runtime$/, replacement: 'preact/compat/jsx-runtime' },
  { find: /^react\/jsx-dev-runtime$/, replacement: 'preact/compat/jsx-dev-runtime' },
  { find: /^react-dom$/, replacement: 'preact/compat' },
  { find: /^react-dom\/client$/, replacement: 'preact/compat/client' },
]

/** The build's aliases for a renderer: none for React, whose packages are the modal's own. */
export const rendererAliases = (renderer: ModalRenderer) =>
  renderer === 'preact' ? PREACT_ALIASES : []
