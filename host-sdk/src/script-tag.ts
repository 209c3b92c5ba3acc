import {
  HOST_ELEMENT_IDS,
  type HostAppConfig,
  type LatchClient,
  type LatchOptions,
} from '@latch/shared'
import { createLatch } from './create-latch.ts'

declare global {
  interface Window {
    latch?: LatchClient
  }
}

/**
 * Options from a `<script src=".../sdk.js" data-app-id="...">` tag: `data-modal-url` (default: the
 * script's own origin) and `data-config` (JSON of the host configuration) are optional.
 */
export function optionsFromScript(script: HTMLOrSVGScriptElement): LatchOptions {
  const data = (script as HTMLElement).dataset
  const src = script instanceof HTMLScriptElement ? script.src : ''
  const options: LatchOptions = {
    appId: data.appId ?? '',
    modalUrl: data.modalUrl ?? (src ? new URL(src).origin : undefined),
  }
  if (data.config) {
    try {
      options.config = JSON.parse(data.config) as HostAppConfig
    } catch {
      console.error('Latch: data-config is not valid JSON; it was ignored.')
    }
  }
  return options
}

/** Creates `window.latch` from the script tag and opens sign-in on `[data-latch-login]` clicks. */
export function installFromScript(script: HTMLOrSVGScriptElement | null): LatchClient | undefined {
  if (!script) return undefined
  const latch = createLatch(optionsFromScript(script))
  window.latch = latch
  document.addEventListener('click', (event) => {
    const target = event.target
    if (!(target instanceof Element)) return
    if (!target.closest(`[${HOST_ELEMENT_IDS.loginAttribute}]`)) return
    event.preventDefault()
    latch.login().catch(() => {})
  })
  return latch
}
