/** The code e-mail and SMS in English, with {code}, {app} and {minutes} (the server's). */
export const enMail = {
  subject: '{code} is your {app} login code',
  text: 'Your {app} login code is {code}.\n\nIt expires in {minutes} minutes. If you did not ask for it, ignore this e-mail.\n',
  sms: '{code} is your {app} login code. It expires in {minutes} minutes.',
}
