/** SMS code sign-in: POST /passwordless_sms/{init,authenticate,link,unlink}. */
import { smsCodeBody, smsInitBody, smsUnlinkBody, validatePhone } from '@latch/shared'
import { codeRoutes } from '../codes/routes.ts'
import type { Deps } from '../context.ts'
import { admitNumber, chargeSms } from './guard.ts'

export function smsRoutes(deps: Deps) {
  return codeRoutes(deps, {
    channel: 'sms',
    bodies: {
      init: smsInitBody,
      code: smsCodeBody,
      unlink: smsUnlinkBody,
      field: 'phoneNumber',
      unlinkField: 'phoneNumber',
    },
    normalize: validatePhone,
    account: (number) => ({ type: 'phone', number }),
    send: (d, to, code, appName, locale) => d.delivery.sendSmsCode(to, code, appName, locale),
    admit: admitNumber,
    charge: (trx, app) => chargeSms(trx, deps.clock, deps.config.smsBudget, app.id),
  })
}
