/**
 * The errors only the server's own callers receive: the user API (/api/v1/admin, an app's
 * server secret) and the operator API (/api/v1/operator, LATCH_ADMIN_KEY), both refused from
 * browsers. The modal and the host SDK never call them, so these entries stay out of the
 * client catalogue (catalogue.ts) and out of the modal's landing; the server merges them
 * (mergeErrors, server/src/api.ts). Their codes belong to the one `ErrorCode` union all the
 * same. A client that did receive one reads it from the answer: fromApiError keeps an unknown
 * code, its type and message.
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
} as const

export type ServerErrorCode = keyof typeof SERVER_ERRORS
