import { DestinationForm } from '../components/DestinationForm.tsx'
import { useApp } from '../hooks.ts'

export function LinkEmail() {
  const { name } = useApp()
  return (
    <div className="latch-screen" data-testid="screen-LINK_EMAIL_SCREEN">
      <h1 className="latch-title">Connect your email</h1>
      <p className="latch-description" data-testid="link-description">
        Add your email to your {name} account
      </p>
      <DestinationForm channel="email" helper="Easily connect an email" />
    </div>
  )
}
