import type { OAuthProvider } from '@latch/shared'

/**
 * The slot for social sign-in buttons, shown after the 'Or' divider. The buttons themselves
 * arrive with the OAuth issue; until then the slot renders nothing.
 */
export function SocialButtons(_props: { providers: OAuthProvider[] }) {
  return null
}
