/**
 * The errors only the server's own callers receive: the user API (/api/v1/admin, an app's
 * server secret) and the operator API (/api/v1/operator, LATCH_ADMIN_KEY), both refused from
 * browsers. The modal and the host SDK never call them, so these entries stay out of the
 * client catalogue (catalogue.ts) and out of the modal's landing; the server merges them
 * (mergeErrors, server/src/api.ts). Their codes belong to the one `ErrorCode` union all the
 * same. A client that did receive one reads it from the answer: fromApiError keeps an unknown
 * code, its type and message. So do the refusals of a batch the app pays for: the wallet
 * frame receives them from the API and hands them on as they came, and the modal's landing
 * carries none of them.
 */
// Checked as ErrorSpecs where the server merges them (mergeErrors's parameter), so this file
// imports nothing from catalogue.ts, which imports its codes' type.
export const SERVER_ERRORS = {
  // The user API.
  missing_or_invalid_latch_account_id: {
    type: 'api_error',
    status: 400,
    message: 'Missing or invalid Latch account ID',
    retryable: false,
  },
  invalid_app_secret: {
    type: 'api_error',
    status: 401,
    message: 'Invalid app secret',
    retryable: false,
  },
  app_secret_from_browser: {
    type: 'api_error',
    status: 403,
    message: 'App secrets are refused from browsers',
    retryable: false,
  },
  // The operator API.
  invalid_admin_key: {
    type: 'api_error',
    status: 401,
    message: 'Invalid operator key',
    retryable: false,
  },
  admin_key_from_browser: {
    type: 'api_error',
    status: 403,
    message: 'The operator key is refused from browsers',
    retryable: false,
  },
  // Batches of calls the app pays for (server/src/sponsor): each refusal changes nothing.
  /** No sponsor of the app on the chain, or a chain without EIP-7702 (the Prague rules). */
  sponsor_unavailable: {
    type: 'api_error',
    status: 400,
    message: 'This app does not pay network fees on this network',
    retryable: false,
  },
  /** A call to a contract or function the app's policy does not pay for, or over its gas cap. */
  sponsor_policy_refused: {
    type: 'api_error',
    status: 403,
    message: 'This app does not pay network fees for this request',
    retryable: false,
  },
  /** The app's daily budget for this user, or for all its users, is spent (Retry-After). */
  sponsor_budget_exhausted: {
    type: 'api_error',
    status: 429,
    message: 'This app’s budget for network fees is used up for today',
    retryable: true,
  },
  /** The app's sponsor account holds too little to pay. */
  sponsor_out_of_funds: {
    type: 'api_error',
    status: 503,
    message: 'This app cannot pay network fees right now',
    retryable: true,
  },
  /** A batch not signed by the wallet's key, past its deadline, or of another user's wallet. */
  batch_invalid: {
    type: 'api_error',
    status: 400,
    message: 'Invalid batch of calls',
    retryable: false,
  },
  /** The batch's simulation reverted: sent, it would fail (details: which call, why). */
  batch_reverted: {
    type: 'api_error',
    status: 422,
    message: 'This batch of calls would fail',
    retryable: false,
  },
  /** An EIP-7702 authorization to anything but Latch's delegate contract. */
  delegation_refused: {
    type: 'api_error',
    status: 400,
    message: 'The wallet delegates only to Latch’s contract',
    retryable: false,
  },
} as const

export type ServerErrorCode = keyof typeof SERVER_ERRORS
