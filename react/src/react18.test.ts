// @vitest-environment node
/**
 * @latch/react under React 18, the older peer it declares (`^18.2.0 || ^19.0.0`): the package as
 * built for npm runs in a child Node whose `react` and `react-dom` are 18.3.1 (the
 * examples/react18 workspace holds them beside the repository's React 19), with jsdom as the
 * page. The server render, a StrictMode client render that mounts exactly one modal frame, the
 * login button, and an unmount that takes the frame away are checked there; the hooks' behaviour
 * itself is hooks.test.tsx's, under React 19.
 */
import { execFile } from 'node:child_process'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, expect, test } from 'vitest'
import { buildLibrary } from '../../scripts/build-library.ts'
import { REACT_EXTERNAL } from '../build.ts'

const FIXTURE = fileURLToPath(new URL('../../examples/react18/', import.meta.url))
// Inside the fixture, so the build's `import 'react'` resolves to its React 18; per process, so
// nothing races examples.spec.ts, which builds react/dist.
const OUT = join(FIXTURE, 'node_modules/.cache', `latch-react-${process.pid}`)

afterAll(async () => {
  await rm(OUT, { recursive: true, force: true })
})

const SCRIPT = `
import { JSDOM } from 'jsdom'
const dom = new JSDOM('<!doctype html><html><body><main id="root"></main></body></html>', {
  url: 'https://www.example.com/shop',
  pretendToBeVisual: true,
})
// The page's globals (window, document, location, storage, events...) where Node has none.
for (const key of Object.getOwnPropertyNames(dom.window)) {
  if (key in globalThis && key !== 'navigator') continue
  Object.defineProperty(globalThis, key, { value: dom.window[key], configurable: true, writable: true })
}
for (const key of ['addEventListener', 'removeEventListener', 'dispatchEvent']) {
  globalThis[key] = dom.window[key].bind(dom.window)
}
globalThis.IS_REACT_ACT_ENVIRONMENT = true
const React = await import('react')
const { createRoot } = await import('react-dom/client')
const { renderToString } = await import('react-dom/server')
const { act } = React
const { LatchProvider, LatchLoginButton, useLatch } = await import('./index.js')

const appId = 'cl0000000000000000000000a'
const modalUrl = 'https://auth.example.com'
const h = React.createElement
function State() {
  const { ready, authenticated, user } = useLatch()
  return h('p', { id: 'state' }, \`ready=\${ready} authenticated=\${authenticated} user=\${user === null}\`)
}
const tree = () =>
  h(React.StrictMode, null,
    h(LatchProvider, { appId, modalUrl }, h(State), h(LatchLoginButton, null, 'Sign in')))

const server = renderToString(tree())
const root = createRoot(document.getElementById('root'))
await act(async () => root.render(tree()))
const frames = [...document.querySelectorAll('iframe')].map((f) => f.src)
const state = document.getElementById('state')?.textContent
const button = document.querySelector('button')?.textContent
await act(async () => root.unmount())
await new Promise((resolve) => setTimeout(resolve, 20))
console.log(JSON.stringify({
  react: React.version,
  server: server.includes('ready=false authenticated=false user=true') && server.includes('Sign in'),
  frames: frames.map((src) => new URL(src).origin),
  state,
  button,
  framesAfterUnmount: document.querySelectorAll('iframe').length,
}))
// The SDK's handshake with a modal that jsdom never loads would wait out its timeout.
process.exit(0)
`

test('behavior: the built package renders on the server and in the browser under React 18, with one modal frame under StrictMode, gone after unmount', async () => {
  await mkdir(OUT, { recursive: true })
  await buildLibrary({ name: 'react', external: REACT_EXTERNAL, outDir: OUT })
  await writeFile(join(OUT, 'check.mjs'), SCRIPT)
  const { stdout } = await promisify(execFile)(process.execPath, ['check.mjs'], {
    cwd: OUT,
    timeout: 60_000,
  })
  const result = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>
  expect(result).toEqual({
    react: '18.3.1',
    server: true,
    frames: ['https://auth.example.com'],
    state: 'ready=false authenticated=false user=true',
    button: 'Sign in',
    framesAfterUnmount: 0,
  })
}, 120_000)
