import { useModal } from '../hooks.ts'

/** A registered screen whose issue has not landed yet. */
export function Placeholder() {
  const screen = useModal((s) => s.screen)
  return (
    <div className="latch-screen latch-center" data-testid={`screen-${screen}`}>
      <p className="latch-muted">This screen is not available yet.</p>
    </div>
  )
}
