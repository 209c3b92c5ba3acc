import type { ButtonHTMLAttributes } from 'react'
import { type UseLoginOptions, useLatch, useLogin } from './hooks.ts'

export interface LatchLoginButtonProps
  extends Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'onClick' | 'onError'>,
    UseLoginOptions {}

/**
 * A plain `<button>` that opens the sign-in; disabled until Latch is ready and while someone is
 * signed in. Style it like any button (className, style); its text is its children.
 */
export function LatchLoginButton({
  onComplete,
  onError,
  children = 'Sign in',
  disabled,
  type = 'button',
  ...rest
}: LatchLoginButtonProps) {
  const { authenticated } = useLatch()
  const { login, ready } = useLogin({
    ...(onComplete ? { onComplete } : {}),
    ...(onError ? { onError } : {}),
  })
  return (
    <button {...rest} type={type} disabled={disabled || !ready || authenticated} onClick={login}>
      {children}
    </button>
  )
}
