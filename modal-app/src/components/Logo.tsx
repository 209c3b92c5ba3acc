import { useApp } from '../hooks.ts'

export function Logo() {
  const { logoUrl, name } = useApp()
  if (!logoUrl) return null
  return (
    <div className="latch-logo">
      <img src={logoUrl} alt={name ? `${name} logo` : 'Logo'} data-testid="app-logo" />
    </div>
  )
}
