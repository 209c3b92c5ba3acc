/** The Sign-In with Ethereum (EIP-4361) message the visitor signs. */
import { SIWE_STATEMENT } from '@latch/shared'
import type { Hex } from 'viem'
import { createSiweMessage } from 'viem/siwe'

/** How long a signed message stays usable: the nonce's own lifetime on the server. */
export const SIWE_MESSAGE_LIFETIME_MS = 10 * 60_000

export interface SiweFields {
  /** The host page's URL (HostMethods.pageUrl): the site the visitor sees and signs in to. */
  pageUrl: string
  address: Hex
  chainId: number
  nonce: string
  now: Date
}

/**
 * The message: domain and URI are the host page's (the wallet shows the visitor that site and
 * the server accepts only the app's allowed origins), never the modal's. The fragment is left
 * out of the URI: it is the page's own business. viem validates every field as it writes.
 */
export function siweMessage({ pageUrl, address, chainId, nonce, now }: SiweFields): string {
  const url = new URL(pageUrl)
  return createSiweMessage({
    domain: url.host,
    address,
    statement: SIWE_STATEMENT,
    uri: `${url.origin}${url.pathname}${url.search}`,
    version: '1',
    chainId,
    nonce,
    issuedAt: now,
    expirationTime: new Date(now.getTime() + SIWE_MESSAGE_LIFETIME_MS),
  })
}
