/**
 * eth_populateTransactionRequest: a request filled as ethers v6's populateTransaction fills one
 * (nonce, gas, chain and fees read through the API's proxy), refused when the wallet cannot pay.
 */
import { type FeeData, type Hex, hexOf, LatchError } from '@latch/shared'
import { bad, type RpcCall, type RpcDeps } from './call.ts'
import {
  type AccessList,
  accessList,
  chainIdOf,
  explicitType,
  optionalQuantity,
  type TxInput,
} from './transaction.ts'

/** A populated request: quantities as hex, so it crosses penpal and JSON alike. */
export interface PopulatedTransaction {
  from: Hex
  to?: Hex
  data?: Hex
  value: Hex
  nonce: number
  gasLimit: Hex
  chainId: number
  type: 0 | 1 | 2
  gasPrice?: Hex
  maxFeePerGas?: Hex
  maxPriorityFeePerGas?: Hex
  accessList?: AccessList
}

/**
 * The fee fields as ethers v6's populateTransaction chooses them. `type` is the family asked
 * for (undefined when none); `fees` is read only when something is missing.
 */
function chooseFees(
  type: 0 | 1 | 2 | undefined,
  given: { gasPrice?: bigint; maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint },
  fees: FeeData | null,
  hasAccessList: boolean,
): Pick<PopulatedTransaction, 'type' | 'gasPrice' | 'maxFeePerGas' | 'maxPriorityFeePerGas'> & {
  maxCost: bigint
} {
  const has1559 = given.maxFeePerGas !== undefined || given.maxPriorityFeePerGas !== undefined
  if (given.gasPrice !== undefined && (type === 2 || has1559)) {
    throw bad('Invalid transaction request: a type 2 transaction takes maxFeePerGas, not gasPrice')
  }
  if ((type === 0 || type === 1) && has1559) {
    throw bad(`Invalid transaction request: a type ${type} transaction takes gasPrice`)
  }
  // A tip the request names is kept as named: above its own max fee it is refused, not lowered.
  if (
    given.maxFeePerGas !== undefined &&
    given.maxPriorityFeePerGas !== undefined &&
    given.maxPriorityFeePerGas > given.maxFeePerGas
  ) {
    throw bad('Invalid transaction request: maxPriorityFeePerGas is above maxFeePerGas')
  }
  const legacy = (family: 0 | 1, gasPrice: bigint | null | undefined) => {
    if (gasPrice == null) throw bad('The chain answered no gas price')
    return { type: family, gasPrice: hexOf(gasPrice), maxCost: gasPrice }
  }
  const eip1559 = (maxFee: bigint | null | undefined, priority: bigint | null | undefined) => {
    if (maxFee == null || priority == null) {
      throw bad('This chain has no base fee: send a legacy transaction with gasPrice')
    }
    // A given max fee below the node's suggested tip caps that suggestion (a tip above the max
    // fee is invalid); a tip the request names never gets here above its max fee.
    const capped = priority > maxFee ? maxFee : priority
    return {
      type: 2 as const,
      maxFeePerGas: hexOf(maxFee),
      maxPriorityFeePerGas: hexOf(capped),
      maxCost: maxFee,
    }
  }
  if (type === 0 || type === 1) return legacy(type, given.gasPrice ?? fees?.gasPrice)
  if (type === 2 || has1559) {
    return eip1559(
      given.maxFeePerGas ?? fees?.maxFeePerGas,
      given.maxPriorityFeePerGas ?? fees?.maxPriorityFeePerGas,
    )
  }
  // No family asked for: EIP-1559 where the chain has a base fee (a legacy gasPrice given then
  // serves as both fees, as ethers v6 does), else legacy.
  if (fees?.maxFeePerGas != null && fees.maxPriorityFeePerGas != null) {
    return given.gasPrice !== undefined
      ? eip1559(given.gasPrice, given.gasPrice)
      : eip1559(fees.maxFeePerGas, fees.maxPriorityFeePerGas)
  }
  return legacy(hasAccessList ? 1 : 0, given.gasPrice ?? fees?.gasPrice)
}

export async function populate(
  deps: RpcDeps,
  call: RpcCall,
  tx: TxInput,
): Promise<PopulatedTransaction> {
  const from = call.address
  const type = explicitType(tx)
  const chainId = chainIdOf(tx.chainId ?? deps.defaultChainId)
  const chain = deps.chain(chainId, call.accessToken)
  const value = optionalQuantity(tx.value, 'value') ?? 0n
  const given = {
    nonce: optionalQuantity(tx.nonce, 'nonce'),
    gasLimit: optionalQuantity(tx.gasLimit, 'gasLimit'),
    gasPrice: optionalQuantity(tx.gasPrice, 'gasPrice'),
    maxFeePerGas: optionalQuantity(tx.maxFeePerGas, 'maxFeePerGas'),
    maxPriorityFeePerGas: optionalQuantity(tx.maxPriorityFeePerGas, 'maxPriorityFeePerGas'),
  }
  const list = tx.accessList == null ? undefined : accessList(tx.accessList)
  if (type === 0 && list) {
    throw bad('Invalid transaction request: a type 0 transaction has no accessList')
  }
  // Fee data is read unless the request already names every fee its family needs.
  const complete =
    ((type === 0 || type === 1) && given.gasPrice !== undefined) ||
    (type !== 0 &&
      type !== 1 &&
      given.maxFeePerGas !== undefined &&
      given.maxPriorityFeePerGas !== undefined)
  const [nonce, gasLimit, fees, balance] = await Promise.all([
    given.nonce ?? chain.nonce(from).then(BigInt),
    given.gasLimit ??
      chain.estimateGas({
        from,
        ...(tx.to && { to: tx.to }),
        ...(tx.data && { data: tx.data }),
        value: hexOf(value),
      }),
    complete ? null : chain.feeData(),
    chain.balance(from),
  ])
  const { maxCost, ...feeFields } = chooseFees(type, given, fees, list !== undefined)
  if (value + gasLimit * maxCost > balance) throw LatchError.of('insufficient_funds')
  return {
    from,
    ...(tx.to && { to: tx.to }),
    ...(tx.data && { data: tx.data }),
    value: hexOf(value),
    nonce: Number(nonce),
    gasLimit: hexOf(gasLimit),
    chainId,
    ...feeFields,
    ...(list && { accessList: list }),
  }
}
