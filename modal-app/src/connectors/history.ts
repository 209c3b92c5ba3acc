/**
 * The wallets connected in this modal: kept in sessionStorage (the tab's; a browser that
 * partitions or refuses this frame's storage gets memory only) and told to the host page with
 * the 'wallet_connected' event as each one connects.
 */
import type { WalletConnection } from '@latch/shared'
import { callHost } from '../runtime.ts'

const KEY = 'latch:wallet-connections'
/** Enough to say which wallets were used lately, without growing forever. */
export const HISTORY_LIMIT = 20

let memory: WalletConnection[] = []

function storage(): Storage | null {
  try {
    return typeof sessionStorage === 'undefined' ? null : sessionStorage
  } catch {
    // A sandboxed or storage-blocked frame throws on the mere access.
    return null
  }
}

const isConnection = (v: unknown): v is WalletConnection =>
  typeof v === 'object' &&
  v !== null &&
  ['address', 'connectorType', 'walletClientType', 'connectedAt'].every(
    (k) => typeof (v as Record<string, unknown>)[k] === 'string',
  )

/** The connections, the latest first. */
export function walletConnections(): WalletConnection[] {
  const raw = (() => {
    try {
      return storage()?.getItem(KEY) ?? null
    } catch {
      return null
    }
  })()
  if (raw === null) return [...memory]
  try {
    const parsed: unknown = JSON.parse(raw)
    return Array.isArray(parsed) ? parsed.filter(isConnection).slice(0, HISTORY_LIMIT) : []
  } catch {
    return []
  }
}

/** Records a connection (the same address and connector moves to the front) and tells the host. */
export function recordWalletConnection(connection: WalletConnection): void {
  const rest = walletConnections().filter(
    (c) =>
      c.address.toLowerCase() !== connection.address.toLowerCase() ||
      c.connectorType !== connection.connectorType,
  )
  memory = [connection, ...rest].slice(0, HISTORY_LIMIT)
  try {
    storage()?.setItem(KEY, JSON.stringify(memory))
  } catch {
    // Full or refused: memory keeps it for this page.
  }
  callHost('emit', 'wallet_connected', connection)
}

/** Tests: forget everything. */
export function clearWalletConnections(): void {
  memory = []
  try {
    storage()?.removeItem(KEY)
  } catch {}
}
