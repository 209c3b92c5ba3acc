/**
 * Every text of the passkey screens, in one place (the spec has none for passkeys), but the
 * landing's button ('Use a passkey', in Landing.tsx): a module the landing imports
 * goes into the landing's chunk whole, and its budget has no room for the rest.
 */
export const PASSKEY_TEXTS = {
  loginTitle: 'Continue with a passkey',
  loginDescription: (app: string) => `Use a passkey saved on this device to sign in to ${app}.`,
  signIn: 'Sign in with a passkey',
  create: 'Create a passkey',
  createHint: 'New here? Create one and you are signed up.',
  waiting: 'Waiting for your passkey…',
  success: 'Signed in',
  manageTitle: 'Your passkeys',
  manageDescription: (app: string) => `Passkeys you use to sign in to ${app}`,
  none: 'No passkeys yet.',
  add: 'Add a passkey',
  added: 'Passkey added',
  rename: 'Rename',
  renameLabel: (name: string) => `New name for ${name}`,
  save: 'Save',
  cancel: 'Cancel',
  remove: 'Remove',
  removeLabel: (name: string) => `Remove ${name}`,
  done: 'Done',
  back: 'Other ways to sign in',
  defaultName: 'Passkey',
  popupTitle: 'Create your passkey',
  popupContinue: 'Continue',
  popupBlocked: 'Allow pop-ups for this site to create a passkey here.',
} as const
