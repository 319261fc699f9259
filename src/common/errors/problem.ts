import { ERROR_CODES, ErrorCode } from './error-codes';
import { ApiError, ProblemEntry } from './api-error';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: ErrorCode;
  requestId: string;
  errors?: ProblemEntry[];
  [extension: string]: unknown;
}

export function errorTypeUrl(publicBaseUrl: string, code: string): string {
  return `${publicBaseUrl}/docs/api/errors#${code}`;
}

/** Builds the RFC 9457 document of an ApiError for one request. */
export function toProblem(
  error: ApiError,
  ctx: { publicBaseUrl: string; instance: string; requestId: string },
): ProblemDocument {
  const spec = ERROR_CODES[error.code];
  const doc: ProblemDocument = {
    ...(error.extensions ?? {}),
    type: errorTypeUrl(ctx.publicBaseUrl, error.code),
    title: spec.title,
    status: spec.status,
    detail: error.detail,
    instance: ctx.instance,
    code: error.code,
    requestId: ctx.requestId,
  };
  if (error.errors && error.errors.length > 0) doc.errors = error.errors;
  return doc;
}
