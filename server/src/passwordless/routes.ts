/** E-mail code sign-in: POST /passwordless/{init,authenticate,link,unlink}. */
import { emailCodeBody, emailInitBody, emailUnlinkBody, validateEmail } from '@latch/shared'
import { codeRoutes } from '../codes/routes.ts'
import type { Deps } from '../context.ts'

export function passwordlessRoutes(deps: Deps) {
  return codeRoutes(deps, {
    channel: 'email',
    bodies: {
      init: emailInitBody,
      code: emailCodeBody,
      unlink: emailUnlinkBody,
      field: 'email',
      unlinkField: 'address',
    },
    normalize: validateEmail,
    account: (address) => ({ type: 'email', address }),
    send: (d, to, code, appName, locale) => d.delivery.sendEmailCode(to, code, appName, locale),
  })
}
