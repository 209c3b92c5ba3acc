/**
 * The English texts the landing shows, in the landing's chunk. Keys stay short: each one is
 * written at its call site and here. The rest of English is in en-screens.ts, loaded with the
 * screens; both together are the English table (messages.ts), SPEC's texts exactly.
 */
export const en = {
  title: 'Log in or sign up',
  loading: 'Loading',
  wallet: 'Connect Wallet',
  email: 'Email',
  emailSocial: 'Email & Social',
  phone: 'Phone',
  phoneSocial: 'Phone & Social',
  helpWallet: 'Get started without a wallet.',
  helpEmail: 'Get started quickly with email',
  helpPhone: 'Get started quickly with your phone',
  or: 'Or',
  looking: 'Looking for wallets…',
  emailLabel: 'Email address',
  phoneLabel: 'Phone number',
  phoneCountry: 'Country',
  submit: 'Submit',
  legal: 'By logging in I agree to the',
  terms: 'Terms',
  privacy: 'Privacy Policy',
  and: '&',
  close: 'Close',
  dialog: 'Log in to {app}',
  dialogPlain: 'Log in',
  back: 'Back',
  later: 'We’re on it. Please try again later.',
  passkey: 'Use a passkey',
  protectedBy: 'Protected by Latch',
  walletFrame: 'Latch wallet',
}
