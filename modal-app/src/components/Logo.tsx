import { useApp } from '../hooks.ts'

/**
 * The app's logo. Its text alternative is the app's name, as for any logo, in no language of
 * ours; without a name it is decorative (empty alt), since an English 'Logo' said nothing.
 */
export function Logo() {
  const { logoUrl, name } = useApp()
  if (!logoUrl) return null
  return (
    <div className="latch-logo">
      <img src={logoUrl} alt={name ?? ''} data-testid="app-logo" />
    </div>
  )
}
