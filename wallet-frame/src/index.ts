/**
 * The wallet frame, served by the API origin at /apps/{appId}/embedded-wallets: the only code
 * that ever holds key material (DESIGN.md, "Keys of the in-app wallet"). It arrives with the
 * in-app wallet issues; its contract is already `WalletMethods` in shared/src/protocol.ts.
 */
export {}
