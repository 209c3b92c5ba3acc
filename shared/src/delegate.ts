/**
 * Latch's EIP-7702 delegate (server/src/sponsor/contracts/LatchDelegate.sol): the only code an
 * in-app wallet's account may delegate to, and the EIP-712 terms of the batches it executes.
 * The address is the contract's CREATE2 address through the deterministic-deployment proxy
 * (salt zero), the same on every chain; the server's tests derive it from the compiled code.
 */
export const LATCH_DELEGATE_ADDRESS = '0xFdf4949762663257c11BF8C2820C20332d0B4881'

/** The standard deterministic-deployment proxy (present on anvil and most chains). */
export const DETERMINISTIC_DEPLOYER = '0x4e59b44847b379578588920cA78FbF26c0B4956C'

/** EIP-712 domain of a batch; `chainId` and `verifyingContract` (the account) complete it. */
export const BATCH_DOMAIN = { name: 'LatchDelegate', version: '1' } as const

/** EIP-712 types of a batch, as the contract hashes them. */
export const BATCH_TYPES = {
  Batch: [
    { name: 'calls', type: 'Call[]' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
  Call: [
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'data', type: 'bytes' },
  ],
} as const

/** One call of a batch: hex address, wei as a decimal or 0x quantity string, hex calldata. */
export interface BatchCall {
  to: string
  value: string
  data: string
}
