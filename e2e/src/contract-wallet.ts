/**
 * Smart-contract wallets for the injected test wallet (injected-wallet.ts): the SIWE tests'
 * contracts (server/src/siwe/contracts: a wallet that answers EIP-1271 for its owner's key, and
 * a CREATE2 factory), deployed on a local anvil chain. A deployed wallet signs with its owner's
 * plain signature (checked by isValidSignature); a counterfactual one, not deployed yet, wraps
 * it in EIP-6492 with the factory call that would deploy it.
 */
import {
  type Abi,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  getContractAddress,
  type Hex,
  http,
  keccak256,
  serializeErc6492Signature,
  toHex,
} from 'viem'
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts'
import artifact from '../../server/src/siwe/contracts/test-wallet.json' with { type: 'json' }
import { ANVIL_ACCOUNTS, type RunningAnvil } from '../../server/src/testing/index.ts'
import type { WalletAccount } from './injected-wallet.ts'

const { TestWallet, TestWalletFactory } = artifact.contracts

/** Deploys a contract from anvil's first funded account; answers its address. */
async function deploy(anvil: RunningAnvil, abi: Abi, bytecode: Hex, args: unknown[]): Promise<Hex> {
  const account = privateKeyToAccount(ANVIL_ACCOUNTS[0].privateKey)
  const client = createWalletClient({ account, transport: http(anvil.url) })
  const hash = await client.deployContract({ abi, bytecode, args, chain: null })
  const receipt = await anvil.receipt(hash)
  if (receipt.status !== '0x1' || !receipt.contractAddress) {
    throw new Error('contract deployment failed')
  }
  return getAddress(receipt.contractAddress)
}

/** A wallet that signs as `address` with `owner`'s key, its signature optionally wrapped. */
const signingAs = (
  owner: PrivateKeyAccount,
  address: Hex,
  wrap = (s: Hex) => s,
): WalletAccount => ({
  address,
  signMessage: async ({ message }) => wrap(await owner.signMessage({ message })),
})

/** An EIP-1271 wallet of `owner`, deployed now. */
export async function deployedContractWallet(
  anvil: RunningAnvil,
  owner: PrivateKeyAccount,
): Promise<WalletAccount> {
  const address = await deploy(anvil, TestWallet.abi as Abi, TestWallet.bytecode as Hex, [
    owner.address,
  ])
  return signingAs(owner, address)
}

/** The factory counterfactual wallets would be deployed by; deploy it once per chain. */
export const deployWalletFactory = (anvil: RunningAnvil): Promise<Hex> =>
  deploy(anvil, TestWalletFactory.abi as Abi, TestWalletFactory.bytecode as Hex, [])

/**
 * An EIP-6492 wallet of `owner`: its CREATE2 address under `factory`, not deployed; its
 * signatures carry the factory call, so a verifier can simulate the deployment.
 */
export function counterfactualContractWallet(
  factory: Hex,
  owner: PrivateKeyAccount,
  salt: Hex = keccak256(toHex(`latch-e2e-${owner.address}-${Math.random()}`)),
): WalletAccount {
  const initCode =
    `${TestWallet.bytecode}${encodeAbiParameters([{ type: 'address' }], [owner.address]).slice(2)}` as Hex
  const address = getContractAddress({ opcode: 'CREATE2', from: factory, salt, bytecode: initCode })
  const deployment = encodeFunctionData({
    abi: TestWalletFactory.abi as Abi,
    functionName: 'deploy',
    args: [owner.address, salt],
  })
  return signingAs(owner, address, (signature) =>
    serializeErc6492Signature({ address: factory, data: deployment, signature }),
  )
}
