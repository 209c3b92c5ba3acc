/**
 * The English texts of the wallet frame's approvals (pairing a forked session, a new sign-in
 * method): apart from the screens' table so the frame, at its size budget, carries only these.
 */
export const enApproval = {
  apPairTitle: 'Pair this device',
  apPairBody:
    'To use your wallet in the wallet app too, show a pairing code below and type it there.',
  apPairShow: 'Show a pairing code',
  apPairCode: 'Type this code in the wallet on your other device. It works once, for 5 minutes.',
  apEnterBody:
    'Your wallet opens here once you pair this device: show a pairing code in the wallet on your other device, then type it below.',
  apEnterLabel: 'Pairing code',
  apEnterButton: 'Pair this device',
  apBadCode: 'That code is not right, or it expired. Show a new one on your other device.',
  apLinkTitle: 'Approve the new sign-in method',
  apLink: 'Let {method} sign in to your account and open your wallet?',
  apAllow: 'Allow',
  apPasskey: 'a passkey',
  // A batch of calls the app pays for, reviewed in the frame (wallet-frame/src/batch/review.ts);
  // the decoded calls' words are the review screens' own.
  apBatchTitle: 'Confirm these calls',
  apBatchCall: 'Call {n}',
  apBatchFee: 'Network fee: paid by {app}',
  apBatchConfirm: 'Confirm',
  txFrom: 'From',
  txTo: 'To',
  txAmount: 'Amount',
  rUnlimited: 'Unlimited',
  rBaseUnits: '{amount} (token base units)',
  rOnToken: 'on token {token}',
  rSpender: 'Spender',
  rRecipient: 'Recipient',
  rAllowance: 'Allowance',
  rTokenAmount: 'Token amount',
  rCallData: 'Call data ({n} bytes)',
} as const satisfies Record<string, string>
