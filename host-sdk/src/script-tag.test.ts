import { afterEach, expect, test, vi } from 'vitest'
import { installFromScript, optionsFromScript } from './script-tag.ts'

const APP_ID = 'cl0000000000000000000000a'

function scriptTag(attributes: Record<string, string>): HTMLScriptElement {
  const script = document.createElement('script')
  for (const [name, value] of Object.entries(attributes)) script.setAttribute(name, value)
  return script
}

afterEach(() => {
  window.latch?.destroy()
  delete window.latch
  document.body.innerHTML = ''
  vi.restoreAllMocks()
})

test('param: the app id from data-app-id, the modal at the script’s own origin', () => {
  const script = scriptTag({
    src: 'https://auth.example.com:8443/sdk.js?v=1',
    'data-app-id': APP_ID,
  })
  expect(optionsFromScript(script)).toEqual({
    appId: APP_ID,
    modalUrl: 'https://auth.example.com:8443',
  })
})

test('param: data-modal-url and data-config', () => {
  const script = scriptTag({
    src: 'https://cdn.example.com/sdk.js',
    'data-app-id': APP_ID,
    'data-modal-url': 'https://auth.example.com/modal',
    'data-config': '{"appearance":{"theme":"dark"},"loginMethods":["email"]}',
  })
  expect(optionsFromScript(script)).toEqual({
    appId: APP_ID,
    modalUrl: 'https://auth.example.com/modal',
    config: { appearance: { theme: 'dark' }, loginMethods: ['email'] },
  })
})

test('error: invalid data-config is reported and ignored', () => {
  const error = vi.spyOn(console, 'error').mockImplementation(() => {})
  const script = scriptTag({ src: 'https://auth.example.com/sdk.js', 'data-config': '{nope' })
  expect(optionsFromScript(script)).toEqual({ appId: '', modalUrl: 'https://auth.example.com' })
  expect(error).toHaveBeenCalledWith(expect.stringContaining('data-config'))
})

test('behavior: no script tag, nothing installed', () => {
  expect(installFromScript(null)).toBeUndefined()
  expect(window.latch).toBeUndefined()
})

test('behavior: installs window.latch and opens sign-in on [data-latch-login] clicks', () => {
  const script = scriptTag({ src: 'https://auth.example.com/sdk.js', 'data-app-id': APP_ID })
  const latch = installFromScript(script)
  expect(window.latch).toBe(latch)
  expect(document.querySelector('[data-testid="latch-frame"]')?.getAttribute('src')).toBe(
    `https://auth.example.com/?app=${APP_ID}&ssr=${encodeURIComponent('[null,null,null]')}#app=${APP_ID}`,
  )
  const login = vi.spyOn(latch as NonNullable<typeof latch>, 'login').mockResolvedValue({} as never)
  document.body.insertAdjacentHTML(
    'beforeend',
    '<a href="#x" data-latch-login><span id="inner">Sign in</span></a><button id="other">Other</button>',
  )
  document.getElementById('other')?.click()
  expect(login).not.toHaveBeenCalled()
  const click = new MouseEvent('click', { bubbles: true, cancelable: true })
  document.getElementById('inner')?.dispatchEvent(click)
  expect(login).toHaveBeenCalledTimes(1)
  expect(click.defaultPrevented).toBe(true)
})
