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
} as const satisfies Record<string, string>
