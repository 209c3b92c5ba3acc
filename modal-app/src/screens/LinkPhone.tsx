import { DestinationForm } from '../components/DestinationForm.tsx'
import { useApp } from '../hooks.ts'

export function LinkPhone() {
  const { name } = useApp()
  return (
    <div className="latch-screen" data-testid="screen-LINK_PHONE_SCREEN">
      <h1 className="latch-title">Connect your phone</h1>
      <p className="latch-description" data-testid="link-description">
        Add your number to your {name} account
      </p>
      <DestinationForm channel="sms" helper="Easily connect a phone number" />
    </div>
  )
}
