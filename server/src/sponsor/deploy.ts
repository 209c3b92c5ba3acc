/**
 * Deploys Latch's delegate to a chain at its deterministic address: CREATE2 through the standard
 * deterministic-deployment proxy (salt zero), so the address is the same on every chain and
 * anyone may deploy it; what lands there is this exact code, whoever pays.
 */
import { BaseError, DETERMINISTIC_DEPLOYER, LATCH_DELEGATE_ADDRESS } from '@latch/shared'
import {
  concat,
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  getContractAddress,
  type Hex,
  http,
  zeroHash,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { LATCH_DELEGATE_BYTECODE } from './delegate-artifact.ts'

const RPC_TIMEOUT_MS = 15_000
const RECEIPT_TIMEOUT_MS = 120_000

/** Where the checked-in bytecode lands through the proxy. */
export function delegateAddress(bytecode: Hex = LATCH_DELEGATE_BYTECODE): Hex {
  return getContractAddress({
    opcode: 'CREATE2',
    from: DETERMINISTIC_DEPLOYER,
    salt: zeroHash,
    bytecode,
  })
}

export interface DeployResult {
  address: Hex
  /** The deployment's transaction, or null when the code was already there. */
  transactionHash: Hex | null
}

export class DeployError extends BaseError {
  override readonly name = 'DeployError'
}

/** A client for one chain at `rpcUrl`; refuses a node that serves another chain. */
export async function chainClients(rpcUrl: string, chainId: number) {
  const chain = defineChain({
    id: chainId,
    name: `chain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  })
  const transport = http(rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 0 })
  const client = createPublicClient({ chain, transport })
  const served = await client.getChainId()
  if (served !== chainId) {
    throw new DeployError(
      `The node at ${new URL(rpcUrl).host} serves chain ${served}, not ${chainId}`,
    )
  }
  return { chain, transport, client }
}

/** Deploys the delegate with the key's account paying, unless it is already deployed. */
export async function deployDelegate(opts: {
  rpcUrl: string
  chainId: number
  privateKey: Hex
}): Promise<DeployResult> {
  const address = getAddress(delegateAddress())
  if (address !== getAddress(LATCH_DELEGATE_ADDRESS)) {
    throw new DeployError(
      `The compiled delegate lands at ${address}, not at ${LATCH_DELEGATE_ADDRESS}`,
    )
  }
  const { chain, transport, client } = await chainClients(opts.rpcUrl, opts.chainId)
  if (await client.getCode({ address })) return { address, transactionHash: null }
  if (!(await client.getCode({ address: DETERMINISTIC_DEPLOYER }))) {
    throw new DeployError(
      `Chain ${opts.chainId} has no deterministic-deployment proxy at ${DETERMINISTIC_DEPLOYER}; ` +
        'deploy the proxy first (its presigned transaction, github.com/Arachnid/deterministic-deployment-proxy)',
    )
  }
  const account = privateKeyToAccount(opts.privateKey)
  const wallet = createWalletClient({ account, chain, transport })
  const transactionHash = await wallet.sendTransaction({
    to: DETERMINISTIC_DEPLOYER,
    data: concat([zeroHash, LATCH_DELEGATE_BYTECODE]),
  })
  const receipt = await client.waitForTransactionReceipt({
    hash: transactionHash,
    timeout: RECEIPT_TIMEOUT_MS,
  })
  if (receipt.status !== 'success' || !(await client.getCode({ address }))) {
    throw new DeployError(
      `The deployment transaction ${transactionHash} left no code at ${address}`,
    )
  }
  return { address, transactionHash }
}
