/**
 * The page the modal server answers a frame with when the page embedding it is on an origin its
 * app does not list (server.ts, sendRefusal): no screen, no API, only a connection to that
 * page that refuses every call with `origin_not_allowed`, so the host SDK's `ready` and every
 * call fail at once with the origin and the command that adds it.
 */
import { exposeMethods, originNotAllowed, refusingModal } from '@latch/shared'
import { connect, WindowMessenger } from 'penpal'
import { REFUSAL_DATA_ID, type RefusalData } from './refusal-data.ts'

function start(): void {
  const text = document.getElementById(REFUSAL_DATA_ID)?.textContent
  if (!text || window.parent === window) return
  const { origin, appId } = JSON.parse(text) as RefusalData
  connect({
    messenger: new WindowMessenger({ remoteWindow: window.parent, allowedOrigins: [origin] }),
    methods: exposeMethods(refusingModal(originNotAllowed(origin, appId))) as unknown as Record<
      string,
      (...args: never[]) => unknown
    >,
  }).promise.catch(() => {})
}

start()
