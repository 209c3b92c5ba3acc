import { OAUTH_RETURN_PARAM_NAMES, type OAuthReturnParams } from '@latch/shared'

/**
 * Takes the OAuth return parameters off the host URL: returns them when code, state and provider
 * are all present (the modal validates them), and removes every one of ours from the address bar.
 */
export function takeOAuthReturnParams(): OAuthReturnParams | null {
  const url = new URL(location.href)
  const found: Record<string, string> = {}
  for (const [key, name] of Object.entries(OAUTH_RETURN_PARAM_NAMES)) {
    const value = url.searchParams.get(name)
    if (value === null) continue
    found[key] = value
    url.searchParams.delete(name)
  }
  if (Object.keys(found).length === 0) return null
  history.replaceState(history.state, '', url.href)
  const { code, state, provider } = found
  return code && state && provider ? (found as unknown as OAuthReturnParams) : null
}
