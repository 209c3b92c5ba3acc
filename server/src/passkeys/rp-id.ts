/**
 * The WebAuthn RP ID: the domain a passkey belongs to. The browser lets a page on the modal
 * origin use an RP ID that is its host or a parent domain of it (never a public suffix), so the
 * one rule here is that the modal origin's host is the RP ID or a subdomain of it.
 */

const IPV4 = /^[0-9.]+$/
/** A bare domain name (no scheme, port, path or wildcard): browsers refuse anything else. */
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]*[a-z0-9])?$/

/** Whether `host` is `rpId` or a subdomain of it. */
export function hostWithin(host: string, rpId: string): boolean {
  return host === rpId || host.endsWith(`.${rpId}`)
}

/** A host that can be an RP ID: a domain name (browsers take no IP address). */
function isDomain(host: string): boolean {
  return host.length > 0 && !host.startsWith('[') && !IPV4.test(host)
}

/**
 * The registrable domain of the usual deployment, without a public suffix list: the API's host
 * without its first label when it has three or more (auth.example.com → example.com,
 * auth.example.co.uk → example.co.uk), else the host itself (example.com, localhost). An API
 * deeper than one label under the site (a.b.example.com) sets LATCH_PASSKEY_RP_ID.
 */
export function defaultRpId(host: string): string | null {
  if (!isDomain(host)) return null
  const labels = host.split('.')
  return labels.length >= 3 ? labels.slice(1).join('.') : host
}

export type RpIdResult = { rpId: string | null } | { error: string }

/**
 * LATCH_PASSKEY_RP_ID when set (refused when the modal origin is outside it), else the default
 * from the API's public URL (or, without one, the modal origin's host), kept only when the modal
 * origin is within it: a derived value that does not fit leaves passkeys off rather than stopping
 * a server that may not use them.
 */
export function resolveRpId(input: {
  configured: string | null
  publicUrl: string | null
  modalOrigin: string | null
}): RpIdResult {
  const modalHost = input.modalOrigin ? new URL(input.modalOrigin).hostname : null
  if (input.configured !== null) {
    const rpId = input.configured.toLowerCase()
    if (!isDomain(rpId) || !DOMAIN.test(rpId)) {
      return {
        error: `LATCH_PASSKEY_RP_ID must be a domain name such as example.com, got '${input.configured}'`,
      }
    }
    if (modalHost !== null && !hostWithin(modalHost, rpId)) {
      return {
        error: `LATCH_PASSKEY_RP_ID '${rpId}' must be the modal origin's host or a parent domain of it; LATCH_MODAL_ORIGIN ${input.modalOrigin} is outside it`,
      }
    }
    return { rpId }
  }
  const base = input.publicUrl ?? input.modalOrigin
  const rpId = base ? defaultRpId(new URL(base).hostname) : null
  if (rpId === null || modalHost === null || !hostWithin(modalHost, rpId)) return { rpId: null }
  return { rpId }
}
