/**
 * The key export page's logic, apart from its DOM (export.ts) so the server's tests can drive
 * it against the real API: the page's query, checked, and the key rebuilt through the wallet
 * frame's own code (`walletCore.withKey`: the device share and the auth share, combined and
 * checked against the address).
 */
import { type Hex, LatchError } from '@latch/shared'
import { LOCALES, type Locale } from '@latch/shared/i18n'
import { toHex } from './keys.ts'
import type { ShareStore, walletCore } from './wallet.ts'

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/
export const EXPORT_WIDTH = { min: 240, max: 640, default: 320 } as const

/** What the page takes from its URL. Nothing secret: the token comes over penpal. */
export interface ExportParams {
  address: Hex
  width: number
  background?: string
  foreground?: string
  accent?: string
  /** The Copy button's text colour on `accent` (the modal's --latch-accent-fg). */
  accentForeground?: string
  /** The visitor's language, one Latch ships (the modal's); English without. */
  locale?: Locale
}

/**
 * The query `address`, `width`, `background`, `foreground`, `accent`, `accentForeground`, checked; an access token
 * in the URL is refused outright (it would sit in the server's logs and the browser's history).
 */
export function parseExportQuery(
  query: URLSearchParams,
): { ok: true; value: ExportParams } | { ok: false; error: LatchError } {
  const invalid = (message: string) =>
    ({ ok: false, error: LatchError.of('invalid_request_arguments', { message }) }) as const
  if (query.has('token') || query.has('accessToken')) {
    return invalid('The access token is not accepted in the URL')
  }
  const address = query.get('address') ?? ''
  if (!ADDRESS.test(address)) return invalid('address must be a 0x address of 40 hex digits')
  let width: number = EXPORT_WIDTH.default
  const rawWidth = query.get('width')
  if (rawWidth !== null) {
    width = Number(rawWidth)
    if (!/^\d{1,4}$/.test(rawWidth) || width < EXPORT_WIDTH.min || width > EXPORT_WIDTH.max) {
      return invalid(`width must be a whole number from ${EXPORT_WIDTH.min} to ${EXPORT_WIDTH.max}`)
    }
  }
  const value: ExportParams = { address: address as Hex, width }
  for (const name of ['background', 'foreground', 'accent', 'accentForeground'] as const) {
    const color = query.get(name)
    if (color === null) continue
    if (!COLOR.test(color)) return invalid(`${name} must be a colour as #rgb or #rrggbb`)
    value[name] = color
  }
  const locale = query.get('locale')
  if (locale !== null) {
    if (!(LOCALES as readonly string[]).includes(locale)) {
      return invalid(`locale must be one of ${LOCALES.join(', ')}`)
    }
    value.locale = locale as Locale
  }
  return { ok: true, value }
}

export interface ExportDeps {
  core: Pick<ReturnType<typeof walletCore>, 'withKey'>
  store: ShareStore
  /** The device share from the wallet frame, where only its memory holds it (share-channel.ts). */
  askDeviceShare(address: Hex): Promise<Uint8Array | undefined>
}

/**
 * The private key of `address` as 0x hex, rebuilt for this one call. The key's bytes are zeroed
 * as soon as the text is made; the text itself is a JavaScript string, which cannot be zeroed
 * (the page drops it when it goes away).
 */
export async function exportPrivateKey(
  deps: ExportDeps,
  params: { address: Hex; accessToken: string },
): Promise<string> {
  if (!deps.store.get(params.address)) {
    const share = await deps.askDeviceShare(params.address)
    if (!share) throw LatchError.of('wallet_not_on_device')
    deps.store.set(params.address, share)
    share.fill(0)
  }
  return deps.core.withKey(params, (key) => `0x${toHex(key)}`)
}
