/**
 * The one error vocabulary of the API. Codes are never renamed or reused; the title is identical
 * for every error of a code (contract-v1 "Errors"). The docs page /docs/api/errors is built from this.
 */
export interface ErrorCodeSpec {
  readonly status: number;
  readonly title: string;
  /** When it happens and what a client should do: shown on the errors page. */
  readonly description: string;
}

export const ERROR_CODES = {
  unauthorized: {
    status: 401,
    title: 'Missing or invalid API key',
    description:
      'The API key is missing, malformed, unknown, revoked or expired. Fix or replace the key; retrying with the same key will not help.',
  },
  invalid_request: {
    status: 400,
    title: 'Invalid request',
    description:
      'A body or query parameter failed validation. `errors` lists every field at fault (entry codes include unknown_parameter and duplicate_parameter). Fix and resend.',
  },
  invalid_cursor: {
    status: 400,
    title: 'Invalid cursor',
    description:
      'The cursor was not issued by the API or was altered. Resend the exact cursor received, or restart without one.',
  },
  cursor_mismatch: {
    status: 400,
    title: 'Cursor does not match the filters',
    description:
      'The cursor was issued for different filters (or another site). Repeat the same filters, or restart without a cursor.',
  },
  invalid_filter: {
    status: 400,
    title: 'Invalid filter',
    description:
      'An unknown label token, labels.none without narrowing or with a token not ending in :true, or a labelStatus other than labeled combined with a label or score filter. Fix the named parameter.',
  },
  not_found: {
    status: 404,
    title: 'Resource not found',
    description:
      'The resource is absent, deleted, under another site or organization, or no route serves the path. Check the ids; retrying will not help.',
  },
  request_timeout: {
    status: 408,
    title: 'Request timeout',
    description: 'The request was not received whole in time. Retry on a new connection.',
  },
  conflict: {
    status: 409,
    title: 'Conflict',
    description:
      'The request conflicts with the current state (for example an Idempotency-Key reused with a different body).',
  },
  not_labeled: {
    status: 409,
    title: 'Conversation not labeled',
    description:
      'Only a labeled conversation can be reviewed (PUT …/review); this one is pending, failed or not eligible. Wait for the judge to label it.',
  },
  last_site: {
    status: 409,
    title: 'An organization keeps at least one site',
    description: "DELETE of the organization's only site. Create another site first.",
  },
  discovery_already_running: {
    status: 409,
    title: 'A page import is already running for this site',
    description:
      'Only one import per site may run at a time. The problem document names the running import in `importId`: follow it, then start again.',
  },
  cursor_expired: {
    status: 410,
    title: 'Cursor expired',
    description:
      'The change-feed cursor points before the events still kept (EVENT_RETENTION_DAYS): events it had not reached were deleted. Start again without a cursor, and reconcile from the listings if you must not miss a change.',
  },
  export_not_ready: {
    status: 409,
    title: 'Export not ready',
    description:
      'The export has not completed (queued or running), or it failed. Poll GET …/exports/{exportId} until its state is completed, then download.',
  },
  export_expired: {
    status: 410,
    title: 'Export expired',
    description:
      'The export is past its expiresAt: its file was deleted (EXPORT_RETENTION_HOURS). Create a new export.',
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    description: 'The request body is larger than 1 MiB.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    description: 'Request bodies must be JSON sent with Content-Type: application/json (UTF-8).',
  },
  sitemap_not_on_site: {
    status: 422,
    title: 'Sitemap address is not on the site',
    description:
      "The sitemap address is not on the site's host or one of its aliases. No request was made to it.",
  },
  range_not_satisfiable: {
    status: 416,
    title: 'Range not satisfiable',
    description:
      'The Range header of a download asks for bytes past the end of the file. Content-Range gives the size; ask again within it.',
  },
  rate_limited: {
    status: 429,
    title: 'Too many requests',
    description:
      'The allowance of the client address or of the API key is exceeded. Wait the Retry-After seconds, then retry.',
  },
  headers_too_large: {
    status: 431,
    title: 'Request headers too large',
    description:
      'The request line and headers together exceed the server bound (16 KiB). Send fewer or shorter headers.',
  },
  internal_error: {
    status: 500,
    title: 'Internal server error',
    description:
      'A server failure. Retry GET requests with a growing delay; for POST, PATCH or DELETE read the resource first.',
  },
  service_unavailable: {
    status: 503,
    title: 'Service unavailable',
    description: 'A dependency of the service is down. Wait the Retry-After seconds, then retry.',
  },
} as const satisfies Record<string, ErrorCodeSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;
