/** E-mail code sign-in: POST /passwordless/{init,authenticate,link,unlink}. */
import { emailCodeBody, emailInitBody, emailUnlinkBody, validateEmail } from '@latch/shared'
import { codeRoutes } from '../codes/routes.ts'
import type { Deps } from '../context.ts'

export function passwordlessRoutes(deps: Deps) {
  return codeRoutes(deps, {
    channel: 'email',
    method: 'email',
    field: 'email',
    unlinkField: 'address',
    initBody: emailInitBody,
    codeBody: emailCodeBody,
    unlinkBody: emailUnlinkBody,
    normalize: validateEmail,
    account: (address) => ({ type: 'email', address }),
    accountType: 'email',
    send: (d, to, code, appName) => d.delivery.sendEmailCode(to, code, appName),
  })
}
