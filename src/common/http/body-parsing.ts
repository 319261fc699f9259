import express, { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors/api-error';
import { sendProblem } from '../errors/problem-responder';

export const MAX_BODY_BYTES = 1024 * 1024;

const MAX_NUL_ENTRIES = 50;

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * JSON Pointers of the strings (values or keys) holding U+0000: PostgreSQL stores neither in text
 * nor in jsonb, so they are refused up front instead of failing half-way through a write.
 */
export function fieldsWithNul(value: unknown, pointer = '', found: string[] = []): string[] {
  if (found.length >= MAX_NUL_ENTRIES) return found;
  if (typeof value === 'string') {
    if (value.includes('\u0000')) found.push(pointer);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => fieldsWithNul(item, `${pointer}/${i}`, found));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const child = `${pointer}/${escapePointer(key)}`;
      if (key.includes('\u0000')) found.push(child);
      else fieldsWithNul(item, child, found);
    }
  }
  return found;
}

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
        const nulFields = fieldsWithNul(req.body);
        if (nulFields.length > 0) {
          return next(
            ApiError.invalidRequest(
              nulFields.map((pointer) => ({
                code: 'invalid_character',
                detail: 'Text may not contain the NUL character (\\u0000).',
                pointer,
              })),
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
