/**
 * The host page's <style> for the modal's dialog and iframe, which the host SDK adds
 * (host-sdk/src/frame.ts) and `latch csp` (server/src/ops/csp.ts) admits by its hash in the
 * page's style-src: a page whose CSP leaves it out keeps the style from applying. A closed dialog
 * stays laid out (invisible, inert) so the preloaded modal is ready to paint; being invisible, it
 * takes no clicks (a box with `visibility: hidden` is not hit), the host page's content below does.
 */
import { MOBILE_BREAKPOINT_PX, MODAL_WIDTH_PX } from './constants.ts'

export const FRAME_CSS = `.latch-d{position:fixed;inset:0;margin:auto;padding:0;border:0;background:none;width:${MODAL_WIDTH_PX}px;height:fit-content;max-width:100%;max-height:100%;overflow:auto}.latch-d:not([open]){display:block;visibility:hidden}.latch-d::backdrop{background:#00000073}.latch-f{display:block;border:0;width:100%;background:none;color-scheme:normal}@media (max-width:${MOBILE_BREAKPOINT_PX - 1}px){.latch-d{width:100%;margin:auto 0 0}}`
