/**
 * The setup of the host SDK's shared DOM test project (vite.config.ts, `host-sdk-dom`), whose
 * files run one after another in one jsdom document: after each file the document, its
 * storage, cookies, URL and the script tag's `window.latch` are put back as a new jsdom has
 * them, so no file sees what another left.
 */
import { afterAll } from 'vitest'

const START_URL = location.href

afterAll(() => {
  window.latch?.destroy()
  delete window.latch
  const root = document.documentElement
  for (const name of root.getAttributeNames()) root.removeAttribute(name)
  document.head.replaceChildren()
  document.body.replaceChildren()
  for (const name of document.body.getAttributeNames()) document.body.removeAttribute(name)
  localStorage.clear()
  sessionStorage.clear()
  for (const cookie of document.cookie.split(';')) {
    const name = cookie.split('=')[0]?.trim()
    // biome-ignore lint/suspicious/noDocumentCookie: jsdom has no Cookie Store API.
    if (name) document.cookie = `${name}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/`
  }
  history.replaceState(null, '', START_URL)
})
