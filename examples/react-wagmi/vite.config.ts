import { defineConfig } from 'vite'

// Vite compiles the TSX itself (React's automatic runtime); no plugin is needed for a build.
export default defineConfig({
  build: { target: 'es2022' },
})
