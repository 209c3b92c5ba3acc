/**
 * A chain where an app pays its visitors' batches, for the e2e specs: Latch's delegate at its
 * deterministic address and a test ERC-20 (anyone may mint) on an anvil under Prague rules, the
 * app's sponsor made, funded and allowed the token's approve and transfer. The same setup the
 * demo makes at `npm start` (scripts/demo-chain.ts), through the same server functions.
 */
import { ANVIL_ACCOUNTS, type RunningAnvil } from '@latch/server/testing'
import {
  type Abi,
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  http,
  parseEther,
  toFunctionSelector,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { expect } from 'vitest'
import { TEST_CONTRACTS } from '../../server/src/sponsor/contracts/test/artifact.ts'
import { deployDelegate } from '../../server/src/sponsor/deploy.ts'
import { createSponsor, type PolicyPatch, updatePolicy } from '../../server/src/sponsor/store.ts'
import { visit } from './flows.ts'
import type { HostPage } from './harness.ts'
import { WAIT_MS } from './harness.ts'
import { walletFrameOf } from './wallet-flows.ts'

type SponsorDeps = Parameters<typeof createSponsor>[0]

export interface SponsoredChain {
  token: Hex
  tokenAbi: Abi
  sponsor: Hex
  /** Mints `amount` of the token to `to`. */
  mint(to: Hex, amount: bigint): Promise<void>
  tokensOf(who: Hex): Promise<bigint>
  allowance(owner: Hex, spender: Hex): Promise<bigint>
  balanceOf(who: Hex): Promise<bigint>
}

const funder = privateKeyToAccount(ANVIL_ACCOUNTS[0].privateKey as Hex)

export async function sponsoredChain(
  anvil: RunningAnvil,
  deps: SponsorDeps,
  appId: string,
  policy: PolicyPatch = {},
): Promise<SponsoredChain> {
  const chain = defineChain({
    id: anvil.chainId,
    name: `chain ${anvil.chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [anvil.url] } },
  })
  const transport = http(anvil.url)
  const client = createPublicClient({ chain, transport })
  const wallet = createWalletClient({ account: funder, chain, transport })
  await deployDelegate({
    rpcUrl: anvil.url,
    chainId: anvil.chainId,
    privateKey: ANVIL_ACCOUNTS[1].privateKey,
  })
  const t = TEST_CONTRACTS.TestToken
  if (!t) throw new Error('no TestToken')
  const deployed = await wallet.deployContract({ abi: t.abi, bytecode: t.bytecode })
  const token = (await client.waitForTransactionReceipt({ hash: deployed })).contractAddress as Hex
  const sponsor = await createSponsor(deps, appId, anvil.chainId)
  await updatePolicy(deps, appId, anvil.chainId, {
    contracts: {
      [token]: [
        toFunctionSelector('function approve(address,uint256)'),
        toFunctionSelector('function transfer(address,uint256)'),
      ],
    },
    ...policy,
  })
  await client.waitForTransactionReceipt({
    hash: await wallet.sendTransaction({ to: sponsor.address, value: parseEther('1') }),
  })
  const read = (data: Hex) => client.call({ to: token, data }).then((r) => BigInt(r.data ?? '0x0'))
  return {
    token,
    tokenAbi: t.abi,
    sponsor: sponsor.address,
    async mint(to, amount) {
      await client.waitForTransactionReceipt({
        hash: await wallet.writeContract({
          address: token,
          abi: t.abi,
          functionName: 'mint',
          args: [to, amount],
        }),
      })
    },
    tokensOf: (who) =>
      read(encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [who] })),
    allowance: (owner, spender) =>
      read(
        encodeFunctionData({ abi: erc20Abi, functionName: 'allowance', args: [owner, spender] }),
      ),
    balanceOf: (who) => client.getBalance({ address: who }),
  }
}

/** The wallet frame's batch review on the send screen, confirmed by the visitor's click. */
export async function confirmBatch(hp: Pick<HostPage, 'page' | 'modal'>): Promise<void> {
  await visit(hp, 'EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN')
  const button = walletFrameOf(hp).getByTestId('wallet-batch-confirm')
  await button.waitFor({ state: 'visible', timeout: WAIT_MS })
  // A long batch scrolls inside the frame, as the visitor would scroll it.
  await button.scrollIntoViewIfNeeded()
  await expect.poll(() => button.getAttribute('aria-disabled'), { timeout: WAIT_MS }).toBeNull()
  await button.click()
}
