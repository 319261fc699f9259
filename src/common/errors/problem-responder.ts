import { HttpException, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { ServiceRequest } from '../http/request-context';
import { ApiError } from './api-error';
import { PROBLEM_CONTENT_TYPE, toProblem } from './problem';

const logger = new Logger('Errors');

/** Maps anything thrown to the ApiError the client sees. Unknown failures become a generic 500. */
export function toApiError(exception: unknown): ApiError {
  if (exception instanceof ApiError) return exception;
  const bodyParserType = (exception as { type?: unknown })?.type;
  if (typeof bodyParserType === 'string') {
    switch (bodyParserType) {
      case 'entity.too.large':
        return new ApiError('payload_too_large', 'The request body is larger than 1 MiB.');
      case 'entity.parse.failed':
        return ApiError.invalidRequest(
          [{ code: 'malformed_json', detail: 'The body is not valid JSON.', pointer: '' }],
          'The request body is not valid JSON.',
        );
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return new ApiError('unsupported_media_type', 'Request bodies must be UTF-8 JSON.');
      case 'request.aborted':
      case 'request.size.invalid':
        return ApiError.invalidRequest(
          [{ code: 'incomplete_body', detail: 'The body was not received whole.', pointer: '' }],
          'The request body was not received whole.',
        );
    }
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    switch (status) {
      case 400:
        return ApiError.invalidRequest([], 'The request is invalid.');
      case 404:
        return ApiError.notFound();
      case 409:
        return new ApiError('conflict', 'The request conflicts with the current state.');
      case 413:
        return new ApiError('payload_too_large', 'The request body is larger than 1 MiB.');
      case 415:
        return new ApiError('unsupported_media_type', 'Request bodies must be JSON.');
      case 503:
        return new ApiError('service_unavailable', 'A dependency is unavailable; retry later.');
    }
  }
  if (isDependencyUnavailable(exception)) {
    return new ApiError('service_unavailable', 'A dependency of the service is unavailable; retry later.', {
      headers: { 'Retry-After': String(DEPENDENCY_RETRY_AFTER_SECONDS) },
    });
  }
  return new ApiError('internal_error', 'The server failed to handle this request. Retry later.');
}

const DEPENDENCY_RETRY_AFTER_SECONDS = 5;

/** Network errors and PostgreSQL's connection-class, shutdown and missing-database errors. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  // statement_timeout: the database did not answer in time, like a connection that timed out.
  '57014',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '3D000',
]);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed|Stream isn't writeable|Redis connection|max retries per request/i;

/** Whether a failure is a dependency (Postgres, Redis) being down rather than a bug. */
export function isDependencyUnavailable(exception: unknown): boolean {
  for (
    let e = exception as
        | { code?: unknown; message?: unknown; name?: unknown; driverError?: unknown; cause?: unknown }
        | undefined,
      depth = 0;
    e && depth < 4;
    depth++
  ) {
    if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
    if (e.name === 'CannotExecuteNotConnectedError' || e.name === 'ConnectionIsNotSetError') return true;
    if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message)) return true;
    e = (e.driverError ?? e.cause) as typeof e;
  }
  return false;
}

/**
 * Writes the problem document of `exception` for a request: the only place that writes error
 * responses. Internal failures are logged with the request id; nothing internal reaches the client.
 */
export function sendProblem(req: Request, res: Response, exception: unknown, publicBaseUrl: string): void {
  const error = toApiError(exception);
  const requestId = (req as ServiceRequest).id ?? 'req_unknown';
  if (error.status >= 500) {
    logger.error({
      err: exception,
      requestId,
      msg: error.code === 'service_unavailable' ? 'dependency unavailable' : 'request failed',
    });
  }
  const doc = toProblem(error, { publicBaseUrl, instance: req.originalUrl.split('?')[0], requestId });
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(doc));
}
