/**
 * The ERC-20 calls a batch review decodes, as the modal's review screens decode a single
 * transaction (modal-app/src/wallet/decode.ts): `transfer`, `approve`, `transferFrom`, and only
 * calldata that is exactly one of them (the selector, then whole 32-byte words, addresses with
 * clean padding, nothing after), so a summary never hides a byte. Written without an ABI coder:
 * the frame's bundle carries no ethers Interface for three fixed layouts.
 */
import type { Hex } from '@latch/shared'
import { getAddress } from 'ethers/address'

/** An allowance from here up reads as unlimited, as on the modal's screens. */
export const UNLIMITED_ALLOWANCE = 2n ** 255n

export type DecodedCall =
  | { name: 'transfer'; to: Hex; amount: bigint }
  | { name: 'approve'; spender: Hex; amount: bigint; unlimited: boolean }
  | { name: 'transferFrom'; from: Hex; to: Hex; amount: bigint }

const LAYOUTS: Record<string, { name: DecodedCall['name']; words: number }> = {
  '0xa9059cbb': { name: 'transfer', words: 2 },
  '0x095ea7b3': { name: 'approve', words: 2 },
  '0x23b872dd': { name: 'transferFrom', words: 3 },
}

/** An ERC-20 call's meaning, or null for calldata that is not exactly one of the three. */
export function decodeErc20(data: string): DecodedCall | null {
  if (!/^0x[0-9a-fA-F]*$/.test(data)) return null
  const hex = data.toLowerCase()
  const layout = LAYOUTS[hex.slice(0, 10)]
  if (!layout || hex.length !== 10 + 64 * layout.words) return null
  const word = (i: number) => hex.slice(10 + 64 * i, 10 + 64 * (i + 1))
  const address = (i: number): Hex | null => {
    const w = word(i)
    return w.startsWith('0'.repeat(24)) ? (getAddress(`0x${w.slice(24)}`) as Hex) : null
  }
  const uint = (i: number) => BigInt(`0x${word(i)}`)
  if (layout.name === 'transferFrom') {
    const from = address(0)
    const to = address(1)
    return from && to ? { name: 'transferFrom', from, to, amount: uint(2) } : null
  }
  const who = address(0)
  if (!who) return null
  const amount = uint(1)
  return layout.name === 'transfer'
    ? { name: 'transfer', to: who, amount }
    : { name: 'approve', spender: who, amount, unlimited: amount >= UNLIMITED_ALLOWANCE }
}
