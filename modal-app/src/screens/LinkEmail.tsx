import { DestinationForm } from '../components/DestinationForm.tsx'
import { useApp } from '../hooks.ts'
import { t, tf } from '../i18n/i18n.ts'

export function LinkEmail() {
  const { name } = useApp()
  return (
    <div className="latch-screen" data-testid="screen-LINK_EMAIL_SCREEN">
      <h1 className="latch-title">{t('linkEmail')}</h1>
      <p className="latch-description" data-testid="link-description">
        {tf('linkEmailBody', { app: name })}
      </p>
      <DestinationForm channel="email" helper={t('linkEmailHelp')} />
    </div>
  )
}
