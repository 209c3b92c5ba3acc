/**
 * unlink(account) from the host: a host call, never the landing's, so its code (and the unlink
 * target's shape) loads when the host first makes it (methods.ts).
 */
import {
  CODE_ROUTE_PATHS,
  LatchError,
  type UnlinkResponse,
  type UnlinkTarget,
  type User,
  unlinkTargetSchema,
} from '@latch/shared'
import { runtime, signedOutError } from '../runtime.ts'
import { store } from '../store.ts'
import { setUser } from './account.ts'

/** An unlink target as the host sent it, or invalid_data. */
export function checkUnlinkTarget(input: unknown): UnlinkTarget {
  const parsed = unlinkTargetSchema.safeParse(input)
  if (!parsed.success) throw LatchError.of('invalid_data')
  return parsed.data
}

/** Removes a linked account; answers the updated user. */
export async function unlink(target: UnlinkTarget): Promise<User> {
  const account = checkUnlinkTarget(target)
  if (!store.getState().user) throw signedOutError()
  let path: string
  let body: Record<string, string>
  if (account.type === 'email') {
    path = `${CODE_ROUTE_PATHS.email}/unlink`
    body = { address: account.address }
  } else if (account.type === 'phone') {
    path = `${CODE_ROUTE_PATHS.sms}/unlink`
    body = { phoneNumber: account.number }
  } else if (account.type === 'wallet') {
    // The server refuses the in-app wallet itself (embedded_wallet_unlink_forbidden).
    path = '/siwe/unlink'
    body = { address: account.address }
  } else {
    path = '/oauth/unlink'
    body = { provider: account.type.replace(/_oauth$/, ''), subject: account.subject }
  }
  const user = await runtime().api.request<UnlinkResponse>(path, body)
  setUser(user)
  return user
}
