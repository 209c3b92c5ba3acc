import { DestinationForm } from '../components/DestinationForm.tsx'
import { useApp } from '../hooks.ts'
import { t, tf } from '../i18n/i18n.ts'

export function LinkPhone() {
  const { name } = useApp()
  return (
    <div className="latch-screen" data-testid="screen-LINK_PHONE_SCREEN">
      <h1 className="latch-title">{t('linkPhone')}</h1>
      <p className="latch-description" data-testid="link-description">
        {tf('linkPhoneBody', { app: name })}
      </p>
      <DestinationForm channel="sms" helper={t('linkPhoneHelp')} />
    </div>
  )
}
