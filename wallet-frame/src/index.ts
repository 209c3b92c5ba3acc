/**
 * The wallet frame, served by the API origin at /apps/{appId}/embedded-wallets: the only code
 * that ever holds key material (README.md). main.ts is the page; these modules are its parts,
 * exported for the server's tests, which drive the frame's own code against the real API.
 */
export * from './keys.ts'
export * from './passcode.ts'
export * from './passkey.ts'
export * from './rpc/typed-data.ts'
export * from './wallet.ts'
