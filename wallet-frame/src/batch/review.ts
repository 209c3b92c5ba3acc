/**
 * The frame's review of a batch of calls the app pays for (EIP-5792 through EIP-7702): like the
 * approvals (../approval.ts), drawn by this origin, armed only once visible and unchanged for
 * ARM_MS, acted on only on a trusted click. The modal asks the frame to SHOW a batch; the frame
 * checks it, reads the account's state from the chain, lists every call decoded as the review
 * screens decode a single transaction, says who pays the network fee, and on the visitor's click
 * rebuilds the key once, signs the batch (and, the first time on this chain, the authorization
 * delegating to Latch's contract, which nothing the modal sends can change) and sends both to the
 * app's sponsor with its own fetch. On the click the frame first asks the modal whether the
 * request is still open: the modal then keeps the screen open until the answer, or, when the
 * visitor closed it a moment before (the close and the click crossing between the frames), says
 * no and nothing is signed or sent. The modal hears that and the batch's id, nothing more.
 */
import { getChain, LatchError, type WalletSendCallsParams } from '@latch/shared'
import { fill } from '@latch/shared/i18n'
import type { enApproval } from '@latch/shared/i18n/approval'
import { armWhenVisible, onTrustedClick } from '../arm.ts'
import type { KeyHolder } from '../rpc/call.ts'
import { css, dressDocument, surfaceLocale, surfaceTexts } from '../surface.ts'
import type { WalletApi } from '../wallet.ts'
import { decodeErc20 } from './decode.ts'
import { type CheckedBatch, checkBatch, MAX_BATCH_DEADLINE_S, signBatch } from './sign.ts'

/** What the review reads of the chain, through the API's proxy. */
export type ChainRead = (
  chainId: number,
  accessToken: string,
  method: string,
  params: unknown[],
) => Promise<unknown>

export interface BatchReviewDeps {
  api: WalletApi
  wallet: KeyHolder
  read: ChainRead
  /** The app's name as the API knows it (never the modal's word for it). */
  appName(): Promise<string>
  /** Whether the app pays fees on the chain, as the API answers (its capabilities). */
  sponsored(chainId: number, accessToken: string): Promise<boolean>
  /** Unix seconds now. */
  now?: () => number
  /**
   * Asks the modal, on the visitor's click, whether the request is still open: true once it
   * refuses closing until the answer, false when it was closed first (then nothing is sent).
   * Carries nothing; rejects with the reason when the modal cannot be asked.
   */
  sending(): Promise<boolean>
}

/** Wei as the chain's coin, every digit kept (no rounding on a review). */
function coin(wei: bigint): string {
  const whole = wei / 10n ** 18n
  const fraction = (wei % 10n ** 18n).toString().padStart(18, '0').replace(/0+$/, '')
  return fraction ? `${whole}.${fraction}` : `${whole}`
}

/** batchNonce() of the delegate. */
const BATCH_NONCE = '0xc75f3cb6'

/** The code of an account delegated to `address` (EIP-7702: 0xef0100 ‖ address). */
const delegatedTo = (code: string) =>
  /^0xef0100[0-9a-f]{40}$/i.test(code) ? `0x${code.slice(8).toLowerCase()}` : null

export interface BatchReview {
  show(params: WalletSendCallsParams): Promise<{ id: string }>
  dismiss(): void
}

/** The account's next batch nonce and whether it must delegate first (with its tx nonce). */
async function accountState(
  deps: BatchReviewDeps,
  params: WalletSendCallsParams,
  delegate: string,
): Promise<{ nonce: bigint; delegation: { chainId: number; nonce: number } | null }> {
  const read = (method: string, p: unknown[]) =>
    deps.read(params.chainId, params.accessToken, method, p)
  const code = String((await read('eth_getCode', [params.address, 'latest'])) ?? '0x')
  const target = delegatedTo(code)
  if (target === delegate.toLowerCase()) {
    const raw = await read('eth_call', [{ to: params.address, data: BATCH_NONCE }, 'latest'])
    return { nonce: BigInt(String(raw)), delegation: null }
  }
  if (code !== '0x' && target === null) {
    throw LatchError.of('unsupported_transaction', {
      message: 'This account has code of its own: it cannot delegate to Latch’s contract',
    })
  }
  // Not delegated yet: the authorization rides with the first batch, whose nonce is 0 (an
  // account delegated to other code is refused by the server's simulation if that is wrong).
  const txNonce = Number(
    BigInt(String(await read('eth_getTransactionCount', [params.address, 'pending']))),
  )
  return { nonce: 0n, delegation: { chainId: params.chainId, nonce: txNonce } }
}

export function batchReview(doc: Document, deps: BatchReviewDeps, delegate: string): BatchReview {
  let pending: { reject(e: unknown): void; teardown(): void } | null = null

  function dismiss(): void {
    const was = pending
    pending = null
    was?.teardown()
    was?.reject(LatchError.of('transaction_exited'))
  }

  async function show(params: WalletSendCallsParams): Promise<{ id: string }> {
    dismiss()
    const now = deps.now ?? (() => Math.floor(Date.now() / 1000))
    // Checked before anything is shown; the nonce and deadline are the frame's own.
    const shape = {
      chainId: params.chainId,
      account: params.address,
      calls: params.calls,
      nonce: '0',
      deadline: now() + MAX_BATCH_DEADLINE_S / 2,
    }
    checkBatch(shape)
    // The fee line says the app pays: only where it does (nothing is drawn otherwise).
    if (!(await deps.sponsored(params.chainId, params.accessToken))) {
      throw new LatchError({
        code: 'sponsor_unavailable',
        type: 'api_error',
        message: 'This app does not pay network fees on this network',
        retryable: false,
      })
    }
    const locale = surfaceLocale(params.locale)
    const [texts, app, state] = await Promise.all([
      surfaceTexts(locale),
      deps.appName(),
      accountState(deps, params, delegate),
    ])
    const batch: CheckedBatch = checkBatch({ ...shape, nonce: state.nonce.toString() })
    const text = (key: keyof typeof enApproval, values?: Record<string, string>) =>
      values ? fill(texts[key] ?? key, values) : (texts[key] ?? key)
    const colors = params.colors ?? {}
    dressDocument(doc, locale, colors)
    const symbol = getChain(batch.chainId)?.nativeCurrency.symbol ?? 'ETH'

    const root = doc.createElement('section')
    root.dataset.testid = 'wallet-batch'
    css(root, {
      padding: '4px',
      display: 'grid',
      'grid-template-columns': 'minmax(0, 1fr)',
      gap: '8px',
    })
    const title = doc.createElement('h1')
    title.id = 'batch-title'
    title.textContent = text('apBatchTitle')
    css(title, { margin: '0', 'font-size': '16px', 'text-align': 'center' })
    root.setAttribute('aria-labelledby', title.id)
    const list = doc.createElement('ol')
    css(list, {
      margin: '0',
      padding: '0',
      'list-style': 'none',
      display: 'grid',
      gap: '8px',
      'max-height': '60vh',
      overflow: 'auto',
    })
    // A long list scrolls in its box (which fits the slot, so the arming can see it whole); a
    // keyboard scrolls it once it takes the focus, in every engine.
    list.tabIndex = 0
    for (const [i, call] of batch.calls.entries()) {
      const item = doc.createElement('li')
      item.dataset.testid = 'wallet-batch-call'
      css(item, { border: '1px solid currentColor', 'border-radius': '12px', padding: '8px' })
      const rows: [string, string][] = []
      const head = doc.createElement('p')
      css(head, { margin: '0 0 4px', 'font-weight': '600' })
      const decoded = decodeErc20(call.data)
      if (decoded) {
        head.textContent = `${text('apBatchCall', { n: String(i + 1) })}: ${decoded.name} ${text('rOnToken', { token: call.to })}`
        const units = (amount: bigint) => text('rBaseUnits', { amount: amount.toString() })
        if (decoded.name === 'transferFrom') rows.push([text('txFrom'), decoded.from])
        if (decoded.name === 'approve') {
          rows.push([text('rSpender'), decoded.spender])
          rows.push([
            text('rAllowance'),
            decoded.unlimited ? text('rUnlimited') : units(decoded.amount),
          ])
        } else {
          rows.push([text('rRecipient'), decoded.to])
          rows.push([text('rTokenAmount'), units(decoded.amount)])
        }
      } else {
        head.textContent = text('apBatchCall', { n: String(i + 1) })
        rows.push([text('txTo'), call.to])
        if (call.data !== '0x') {
          rows.push([text('rCallData', { n: String((call.data.length - 2) / 2) }), call.data])
        }
      }
      if (call.value > 0n || !decoded) {
        rows.push([text('txAmount'), `${coin(call.value)} ${symbol}`])
      }
      const dl = doc.createElement('dl')
      css(dl, {
        margin: '0',
        display: 'grid',
        // minmax(0, …): a long address or calldata wraps instead of widening the frame.
        'grid-template-columns': 'auto minmax(0, 1fr)',
        gap: '2px 8px',
      })
      for (const [label, value] of rows) {
        const dt = doc.createElement('dt')
        dt.textContent = label
        const dd = doc.createElement('dd')
        dd.textContent = value
        css(dd, {
          margin: '0',
          'overflow-wrap': 'anywhere',
          'font-family': 'ui-monospace, monospace',
        })
        dl.append(dt, dd)
      }
      item.append(head, dl)
      list.append(item)
    }
    const fee = doc.createElement('p')
    fee.dataset.testid = 'wallet-batch-fee'
    fee.textContent = text('apBatchFee', { app })
    css(fee, { margin: '0', 'text-align': 'center' })
    const button = doc.createElement('button')
    button.type = 'button'
    button.dataset.testid = 'wallet-batch-confirm'
    button.textContent = text('apBatchConfirm')
    css(button, {
      padding: '12px',
      border: '0',
      'border-radius': '12px',
      background: colors.accent ?? '#5f66eb',
      color: colors.accentForeground ?? '#ffffff',
      font: 'inherit',
      'font-weight': '600',
      cursor: 'pointer',
    })
    root.append(title, list, fee, button)
    doc.body.replaceChildren(root)

    const arming = armWhenVisible(doc, button, [title, list, fee])

    return new Promise<{ id: string }>((resolve, reject) => {
      const mine = {
        reject,
        teardown() {
          arming.stop()
          root.remove()
        },
      }
      pending = mine
      const act = async () => {
        try {
          // The modal holds the screen open before anything is signed: a caller that already
          // heard transaction_exited (the visitor closed as they clicked) never has a batch sent.
          if (!(await deps.sending())) throw LatchError.of('transaction_exited')
          // Taken away meanwhile (the request ended): nothing is signed.
          if (pending !== mine) return
          // The deadline counts from the click: a review left open does not shorten it.
          const signedBatch = { ...batch, deadline: BigInt(now() + MAX_BATCH_DEADLINE_S / 2) }
          const signed = await deps.wallet.withKey(
            { address: params.address, accessToken: params.accessToken },
            (key) => signBatch(signedBatch, state.delegation, key),
          )
          const answer = await deps.api<{ id: string }>(
            '/calls',
            {
              chainId: batch.chainId,
              account: params.address,
              calls: batch.calls.map((c) => ({
                to: c.to,
                value: c.value.toString(),
                data: c.data,
              })),
              nonce: batch.nonce.toString(),
              deadline: Number(signedBatch.deadline),
              signature: signed.signature,
              ...(signed.authorization && { authorization: signed.authorization }),
              // The dapp's label, checked by the API (which refuses one the user used already).
              ...(typeof params.id === 'string' && { id: params.id }),
            },
            params.accessToken,
          )
          if (pending !== mine) return
          pending = null
          mine.teardown()
          resolve({ id: answer.id })
        } catch (e) {
          if (pending !== mine) return
          // A refusal (outside the policy, over budget, the modal closed or unreachable) ends
          // the request with its reason.
          pending = null
          mine.teardown()
          reject(e)
        }
      }
      onTrustedClick(button, arming, act)
    })
  }

  return { show, dismiss }
}
