import { LatchLoginButton, useLatch, useWallet } from '@latch/react'
import { useState } from 'react'
import { type Address, erc20Abi, formatEther, isAddress, parseEther } from 'viem'
import {
  useBalance,
  useCapabilities,
  useChainId,
  useConnect,
  useConnection,
  useConnectors,
  useDisconnect,
  useSendCalls,
  useSendTransaction,
  useSignMessage,
  useVerifyMessage,
  useWaitForCallsStatus,
  useWaitForTransactionReceipt,
} from 'wagmi'
import { TOKEN } from './wagmi.ts'

export function App() {
  const { ready, error, authenticated, user } = useLatch()
  const { wallet, create } = useWallet()
  // Latch could not start here: on an origin the app does not list, `error.details` is the
  // command that adds it.
  if (error) {
    return (
      <p role="alert" data-testid="latch-error">
        {error.code}: {error.message}. {error.details}
      </p>
    )
  }
  if (!ready) return <p>Loading…</p>
  if (!authenticated) return <LatchLoginButton>Sign in</LatchLoginButton>
  return (
    <>
      <p data-testid="signed-in">Signed in as {user?.email?.address ?? user?.id}</p>
      {wallet ? (
        <Wallet />
      ) : (
        <button type="button" onClick={() => create().catch(() => {})}>
          Create wallet
        </button>
      )}
    </>
  )
}

function Wallet() {
  const { address, status } = useConnection()
  const connectors = useConnectors()
  const { mutate: connect } = useConnect()
  const { mutate: disconnect } = useDisconnect()
  if (status !== 'connected' || !address) {
    return (
      <button type="button" onClick={() => connectors[0] && connect({ connector: connectors[0] })}>
        Connect wallet
      </button>
    )
  }
  return (
    <>
      <p data-testid="address">{address}</p>
      <Balance address={address} />
      <Sign address={address} />
      <Send address={address} />
      {TOKEN && <Batch address={address} token={TOKEN} />}
      <button type="button" onClick={() => disconnect()}>
        Sign out
      </button>
    </>
  )
}

function Balance({ address }: { address: Address }) {
  // Polled, so funds sent from elsewhere show up.
  const { data, error } = useBalance({ address, query: { refetchInterval: 2000 } })
  if (error) return <p role="alert">{error.message}</p>
  return <p data-testid="balance">{data ? `${formatEther(data.value)} ETH` : '…'}</p>
}

function Sign({ address }: { address: Address }) {
  const [message, setMessage] = useState('Hello from Latch')
  const { mutate: signMessage, data: signature, error } = useSignMessage()
  const { data: valid, error: verifyError } = useVerifyMessage({
    address,
    message,
    ...(signature ? { signature } : {}),
    query: { enabled: Boolean(signature) },
  })
  return (
    <section>
      <label>
        Message <input value={message} onChange={(e) => setMessage(e.target.value)} />
      </label>
      <button type="button" onClick={() => signMessage({ message })}>
        Sign
      </button>
      {signature && <p data-testid="signature">{signature}</p>}
      {valid !== undefined && <p data-testid="verified">{valid ? 'valid' : 'invalid'}</p>}
      {error && <p role="alert">{error.message}</p>}
      {verifyError && <p role="alert">Could not verify: {verifyError.message}</p>}
    </section>
  )
}

function Send({ address }: { address: Address }) {
  const [to, setTo] = useState<string>(address)
  const [amount, setAmount] = useState('0.01')
  const { mutate: sendTransaction, data: hash, error } = useSendTransaction()
  const { data: receipt, error: receiptError } = useWaitForTransactionReceipt(hash ? { hash } : {})
  return (
    <section>
      <label>
        To <input value={to} onChange={(e) => setTo(e.target.value)} />
      </label>
      <label>
        ETH <input value={amount} onChange={(e) => setAmount(e.target.value)} />
      </label>
      <button
        type="button"
        onClick={() => sendTransaction({ to: to as Address, value: parseEther(amount) })}
      >
        Send
      </button>
      {hash && <p data-testid="tx-hash">{hash}</p>}
      {receipt && (
        <p data-testid="receipt">
          {receipt.status} in block {receipt.blockNumber.toString()}
        </p>
      )}
      {error && <p role="alert">{error.message}</p>}
      {receiptError && <p role="alert">No receipt: {receiptError.message}</p>}
    </section>
  )
}

/**
 * An ERC-20's approve and transfer in one batch (EIP-5792), through wagmi's useSendCalls. Where
 * the app's sponsor pays for them (useCapabilities says paymasterService), the wallet needs no
 * ETH: the review in the wallet frame says who pays the network fee.
 */
function Batch({ address, token }: { address: Address; token: Address }) {
  const [to, setTo] = useState<string>(address)
  const chainId = useChainId()
  const { data: capabilities, error: capabilitiesError } = useCapabilities({ chainId })
  const { mutate: sendCalls, data, error } = useSendCalls()
  const { data: status, error: statusError } = useWaitForCallsStatus({
    id: data?.id,
    query: { enabled: Boolean(data) },
  })
  const sponsored = capabilities?.paymasterService?.supported === true
  const send = () => {
    if (!isAddress(to)) return
    sendCalls({
      calls: [
        { to: token, abi: erc20Abi, functionName: 'approve', args: [to, 10n] },
        { to: token, abi: erc20Abi, functionName: 'transfer', args: [to, 1n] },
      ],
    })
  }
  return (
    <section>
      <p data-testid="capabilities">
        {capabilities === undefined
          ? '…'
          : sponsored
            ? 'Batches: the app pays the network fee'
            : 'Batches: the app does not pay network fees on this chain'}
      </p>
      <label>
        Token recipient <input value={to} onChange={(e) => setTo(e.target.value)} />
      </label>
      <button type="button" onClick={send}>
        Approve and transfer in one batch
      </button>
      {data && <p data-testid="batch-id">{data.id}</p>}
      {status && (
        <p data-testid="batch-status">
          {status.status} in transaction {status.receipts?.[0]?.transactionHash}
        </p>
      )}
      {capabilitiesError && <p role="alert">{capabilitiesError.message}</p>}
      {error && <p role="alert">{error.message}</p>}
      {statusError && <p role="alert">No status: {statusError.message}</p>}
    </section>
  )
}
