/** The Sign-In with Ethereum (EIP-4361) message the visitor signs. */
import { type Hex, SIWE_STATEMENT } from '@latch/shared'
import { getAddress } from 'ethers/address'

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

/** EIP-4361's nonce: at least 8 alphanumeric characters. */
const NONCE = /^[a-zA-Z0-9]{8,}$/

/**
 * The message, in EIP-4361's layout: domain and URI are the host page's (the wallet shows the
 * visitor that site and the server accepts only the app's allowed origins), never the modal's.
 * The fragment is left out of the URI: it is the page's own business. The page's URL was parsed
 * by URL, so domain and URI are well formed; the address is checksummed by ethers (a mixed-case
 * address with a wrong checksum throws); a nonce or chain id a wallet would reject throws here.
 */
export function siweMessage({ pageUrl, address, chainId, nonce, now }: SiweFields): string {
  const url = new URL(pageUrl)
  if (!NONCE.test(nonce)) throw new Error('SIWE nonce must be at least 8 letters and digits')
  if (!Number.isSafeInteger(chainId) || chainId <= 0) throw new Error('SIWE chain id is invalid')
  if (SIWE_STATEMENT.includes('\n')) throw new Error('SIWE statement must be one line')
  const expires = new Date(now.getTime() + SIWE_MESSAGE_LIFETIME_MS)
  return [
    `${url.host} wants you to sign in with your Ethereum account:`,
    getAddress(address),
    '',
    SIWE_STATEMENT,
    '',
    `URI: ${url.origin}${url.pathname}${url.search}`,
    'Version: 1',
    `Chain ID: ${chainId}`,
    `Nonce: ${nonce}`,
    `Issued At: ${now.toISOString()}`,
    `Expiration Time: ${expires.toISOString()}`,
  ].join('\n')
}
