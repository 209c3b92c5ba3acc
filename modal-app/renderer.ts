/**
 * The modal renders with Preact through preact/compat: the source, zustand and the testing
 * library are written against React's API, and these aliases hand them Preact instead. React
 * DOM was two thirds of the landing's JavaScript; evaluating it was the largest cost of the
 * first open on a phone (README, "The first open").
 *
 * One list for the build (build.ts) and the modal-app test project (vite.config.ts), so the
 * tests exercise the renderer that ships (src/renderer.test.tsx checks it). React itself stays
 * installed only as the testing library's peer; size.test.ts fails if any chunk of the build
 * carries a copy of it, e.g. through a React entry point missing here.
 */
export const PREACT_ALIASES: { find: RegExp; replacement: string }[] = [
  { find: /^react$/, replacement: 'preact/compat' },
  { find: /^react\/jsx-runtime$/, replacement: 'preact/compat/jsx-runtime' },
  { find: /^react\/jsx-dev-runtime$/, replacement: 'preact/compat/jsx-dev-runtime' },
  { find: /^react-dom$/, replacement: 'preact/compat' },
  { find: /^react-dom\/client$/, replacement: 'preact/compat/client' },
  // The testing library's act() where React has none of its own.
  { find: /^react-dom\/test-utils$/, replacement: 'preact/test-utils' },
]

/**
 * Packages under node_modules that import React themselves. Vitest hands dependencies to Node
 * untouched, past the aliases, so these must go through Vite in the test project; otherwise
 * they would load React itself, a second renderer beside Preact.
 */
export const REACT_IMPORTING_DEPENDENCIES = [
  /[\\/]node_modules[\\/]zustand[\\/]/,
  /@testing-library[\\/]react/,
]
