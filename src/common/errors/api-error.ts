import { ERROR_CODES, ErrorCode } from './error-codes';

/** One entry of a problem document's `errors`: a field at fault, located by pointer or parameter. */
export type ProblemEntry =
  { code: string; detail: string; pointer: string } | { code: string; detail: string; parameter: string };

export interface ApiErrorOptions {
  errors?: ProblemEntry[];
  headers?: Record<string, string>;
  /** Extra members added to the problem document (additive, documented per code). */
  extensions?: Record<string, unknown>;
}

/**
 * The typed error raised anywhere in the service. One filter (ProblemFilter) turns it into an
 * RFC 9457 problem document; nothing else writes error responses.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly errors?: ProblemEntry[];
  readonly headers: Record<string, string>;
  readonly extensions?: Record<string, unknown>;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    options: ApiErrorOptions = {},
  ) {
    super(detail);
    this.name = 'ApiError';
    this.status = ERROR_CODES[code].status;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.extensions = options.extensions;
  }

  static notFound(what = 'resource'): ApiError {
    return new ApiError('not_found', `The requested ${what} does not exist.`);
  }

  static invalidRequest(errors: ProblemEntry[], detail?: string): ApiError {
    return new ApiError('invalid_request', detail ?? describeEntries(errors), { errors });
  }
}

function describeEntries(errors: ProblemEntry[]): string {
  if (errors.length === 1) {
    const e = errors[0];
    const where = 'parameter' in e ? `parameter ${e.parameter}` : `field ${e.pointer || '(body)'}`;
    return `The request is invalid: ${where}: ${e.detail}`;
  }
  return `The request is invalid: ${errors.length} fields are at fault; see errors.`;
}
