import express, { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors/api-error';
import { sendProblem } from '../errors/problem-responder';

export const MAX_BODY_BYTES = 1024 * 1024;

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

function isJson(contentType: string): boolean {
  const [mediaType, ...params] = contentType.split(';').map((p) => p.trim().toLowerCase());
  const json = mediaType === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  return json && (charset === undefined || charset === 'utf-8' || charset === 'utf8');
}

/**
 * JSON bodies only, at most 1 MiB, and a JSON object at the top. Failures become problem
 * documents: 415 for another media type, 413 when too large, 400 (pointer "") when malformed.
 */
export function jsonBodyMiddlewares(publicBaseUrl: string) {
  const parse = express.json({ limit: MAX_BODY_BYTES, strict: false, type: () => true });
  return [
    (req: Request, res: Response, next: NextFunction) => {
      if (!hasBody(req)) {
        req.body = {};
        return next();
      }
      if (!isJson(req.headers['content-type'] ?? '')) {
        return next(
          new ApiError(
            'unsupported_media_type',
            'Request bodies must be sent as Content-Type: application/json (UTF-8).',
          ),
        );
      }
      parse(req, res, (err?: unknown) => {
        if (err) return next(err);
        if (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)) {
          return next(
            ApiError.invalidRequest(
              [{ code: 'invalid_type', detail: 'The body must be a JSON object.', pointer: '' }],
              'The request body must be a JSON object.',
            ),
          );
        }
        next();
      });
    },
    (err: unknown, req: Request, res: Response, _next: NextFunction) =>
      sendProblem(req, res, err, publicBaseUrl),
  ];
}
