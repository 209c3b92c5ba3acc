import type { LinkedAccount, OAuthAccount, User, WalletAccount } from './types.ts'

type ByType<T extends LinkedAccount['type']> = Extract<LinkedAccount, { type: T }>

function first<T extends LinkedAccount['type']>(
  accounts: LinkedAccount[],
  type: T,
): ByType<T> | undefined {
  return accounts.find((a): a is ByType<T> => a.type === type)
}

/** The in-app wallet of a user, if any. */
export function embeddedWallet(accounts: LinkedAccount[]): WalletAccount | undefined {
  return accounts.find((a): a is WalletAccount => a.type === 'wallet' && a.walletClient === 'latch')
}

/** Builds a User with its convenience fields from the linked accounts. */
export function buildUser(id: string, createdAt: string, linkedAccounts: LinkedAccount[]): User {
  const user: User = { id, createdAt, linkedAccounts }
  const email = first(linkedAccounts, 'email')
  const phone = first(linkedAccounts, 'phone')
  const wallet = embeddedWallet(linkedAccounts) ?? first(linkedAccounts, 'wallet')
  const google = first(linkedAccounts, 'google_oauth')
  const twitter = first(linkedAccounts, 'twitter_oauth')
  const discord = first(linkedAccounts, 'discord_oauth')
  const github = first(linkedAccounts, 'github_oauth')
  const apple = first(linkedAccounts, 'apple_oauth')
  if (email) user.email = email
  if (phone) user.phone = phone
  if (wallet) user.wallet = wallet
  if (google) user.google = google
  if (twitter) user.twitter = twitter
  if (discord) user.discord = discord
  if (github) user.github = github
  if (apple) user.apple = apple
  return user
}

export function isOAuthAccount(account: LinkedAccount): account is OAuthAccount {
  return account.type.endsWith('_oauth')
}
