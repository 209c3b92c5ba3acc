/**
 * Puts a shared jsdom document back as a new jsdom environment starts it: attributes, head and
 * body, storage, cookies and the URL. The setups of the test projects whose files share one
 * document (modal-app-dom, host-sdk-dom in vite.config.ts) run it after each file, so no file
 * sees what another left.
 */
export function freshDocument(startUrl: string): void {
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
  history.replaceState(null, '', startUrl)
}
