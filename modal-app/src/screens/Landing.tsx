import { type ReactNode, Suspense, useState } from 'react'
import { DestinationForm } from '../components/DestinationForm.tsx'
import { Legal } from '../components/Legal.tsx'
import { Logo } from '../components/Logo.tsx'
import { SocialButtons } from '../components/SocialButtons.tsx'
import { currentFlow, navigate } from '../flow/flow.ts'
import { useApp, useModal } from '../hooks.ts'
import { t } from '../i18n/i18n.ts'
import type { AppView } from '../startup/config.ts'
import { lazyScreen } from './lazy.tsx'

// The wallet list and what a click starts (ethers, the connectors) load apart from the landing,
// which keeps its 90 KB budget (size.test.ts).
const WalletSection = lazyScreen(() =>
  import('../connectors/WalletSection.tsx').then((m) => m.WalletSection),
)

type SectionId = 'wallet' | 'email' | 'phone'

interface Section {
  id: SectionId
  title: string
  body: ReactNode
}

/** Helper text under the input (docs/behaviour.md, "LANDING"). */
export function landingHelper(app: AppView, channel: 'email' | 'sms'): string {
  return t(app.methods.wallet ? 'helpWallet' : channel === 'email' ? 'helpEmail' : 'helpPhone')
}

/** The sections of the landing, in display order. */
export function landingSections(app: AppView): Omit<Section, 'body'>[] {
  const social = app.methods.social.length > 0
  const code: Omit<Section, 'body'> | null = app.methods.email
    ? { id: 'email', title: t(social ? 'emailSocial' : 'email') }
    : app.methods.sms || social
      ? { id: 'phone', title: t(social ? 'phoneSocial' : 'phone') }
      : null
  const wallet: Omit<Section, 'body'> | null = app.methods.wallet
    ? { id: 'wallet', title: t('wallet') }
    : null
  const ordered = app.showWalletLoginFirst ? [wallet, code] : [code, wallet]
  return ordered.filter((s): s is Omit<Section, 'body'> => !!s)
}

export function Landing() {
  const app = useApp()
  const sections = landingSections(app)
  // The flow's, not the component's: Back mounts the landing afresh.
  const [openId, setOpenId] = useState(currentFlow().section ?? sections[0]?.id)
  const single = sections.length < 2
  return (
    <div className="latch-screen latch-landing" data-testid="screen-LANDING">
      <Logo />
      <h1 className="latch-visually-hidden">{t('title')}</h1>
      {sections.map((section) => {
        const open = single || section.id === openId
        const bodyId = `latch-section-${section.id}`
        return (
          <section key={section.id} className="latch-section" data-open={open}>
            <h2 className="latch-section-title">
              {single ? (
                section.title
              ) : (
                <button
                  type="button"
                  className="latch-section-toggle"
                  aria-expanded={open}
                  aria-controls={bodyId}
                  data-testid={`section-${section.id}-toggle`}
                  onClick={() => {
                    currentFlow().section = section.id
                    setOpenId(section.id)
                  }}
                >
                  {section.title}
                </button>
              )}
            </h2>
            {open ? (
              <div id={bodyId} className="latch-section-body">
                <SectionBody id={section.id} app={app} />
              </div>
            ) : null}
          </section>
        )
      })}
      {app.methods.passkey ? (
        // Everything behind it loads lazily (PASSKEY_SCREEN and passkey.ts). Its test id is
        // what a click on the server-rendered landing is held by until the JavaScript runs.
        <button
          type="button"
          className="latch-button"
          data-testid="landing-passkey"
          onClick={() => navigate('PASSKEY_SCREEN')}
        >
          {t('passkey')}
        </button>
      ) : null}
      <Legal />
    </div>
  )
}

function SectionBody({ id, app }: { id: SectionId; app: AppView }) {
  if (id === 'wallet') return <WalletSectionBody />
  const channel = id === 'email' ? 'email' : 'sms'
  return (
    <>
      {app.methods[channel] ? (
        <DestinationForm
          channel={channel}
          helper={landingHelper(app, channel)}
          passkeys={app.methods.passkey}
        />
      ) : null}
      {app.methods.social.length > 0 ? (
        <>
          <div className="latch-divider">
            <span>{t('or')}</span>
          </div>
          <SocialButtons providers={app.methods.social} />
        </>
      ) : null}
    </>
  )
}

/**
 * The wallet list, mounted only while the modal is open: the frame renders the landing hidden
 * at page load, and asking the host page for its wallets then would load its wallet bridge on
 * every page view. Each open asks again (a wallet installed meanwhile shows up).
 */
function WalletSectionBody() {
  const open = useModal((s) => s.open)
  const looking = (
    <p className="latch-muted" role="status">
      {t('looking')}
    </p>
  )
  return (
    <div data-testid="wallet-section-body">
      {/* Its own boundary: the landing stays on screen while the section's chunk arrives. */}
      {open ? (
        <Suspense fallback={looking}>
          <WalletSection />
        </Suspense>
      ) : (
        looking
      )}
    </div>
  )
}
