/**
 * The setup of the host SDK's shared DOM test project (vite.config.ts, `host-sdk-dom`), whose
 * files run one after another in one jsdom document: after each file the document, its
 * storage, cookies, URL and the script tag's `window.latch` are put back as a new jsdom has
 * them, so no file sees what another left.
 */
import { afterAll } from 'vitest'
import { freshDocument } from '../../../modal-app/src/test/fresh-document.ts'

const START_URL = location.href

afterAll(() => {
  window.latch?.destroy()
  delete window.latch
  freshDocument(START_URL)
})
