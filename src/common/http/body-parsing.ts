import express, { NextFunction, Request, Response } from 'express';
import { ApiError, ProblemEntry } from '../errors/api-error';
import { sendProblem } from '../errors/problem-responder';
import { allowedMethods } from './route-table';

/** Bytes of a body after decompression. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Nesting of objects and arrays in a body, the body itself being level 1. The deepest real
 * payload (a product price inside a product card inside a block inside a message) is level 6,
 * and metadata objects are rarely deeper than a handful of levels: 64 leaves room for any honest
 * client while keeping every later walk (validation, class-transformer, JSON.stringify, the
 * driver) far from the stack limit, which 2,000 levels used to overflow.
 */
export const MAX_JSON_DEPTH = 64;

/** Entries listed for unstorable text: enough to locate the fault, never a huge document. */
const MAX_CHARACTER_ENTRIES = 50;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Deepest nesting of a JSON text, read from its bytes before it is parsed: one linear pass that
 * skips strings, stopping as soon as `limit` is passed. Malformed text is left to JSON.parse.
 */
export function jsonDepthExceeds(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A lone UTF-16 surrogate: with the `u` flag, well-formed pairs are one code point and never match. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Why PostgreSQL cannot store a string, or undefined when it can. */
export function unstorable(text: string): string | undefined {
  if (text.includes('\u0000')) return 'Text may not contain the NUL character (\\u0000).';
  if (LONE_SURROGATE.test(text))
    return 'Text must be valid Unicode: a lone surrogate (\\ud800 to \\udfff without its pair) cannot be stored.';
  return undefined;
}

/**
 * One `invalid_character` entry per string (value or key) PostgreSQL cannot store: the NUL
 * character (neither text nor jsonb holds it) and lone surrogates (jsonb refuses them). Refused
 * up front instead of failing half-way through a write. Iterative, so no input depth can
 * overflow the stack; at most MAX_CHARACTER_ENTRIES entries, in document order.
 */
export function unstorableTextEntries(body: unknown): ProblemEntry[] {
  const found: ProblemEntry[] = [];
  const stack: Array<[unknown, string]> = [[body, '']];
  while (stack.length > 0 && found.length < MAX_CHARACTER_ENTRIES) {
    const [value, pointer] = stack.pop()!;
    if (typeof value === 'string') {
      const detail = unstorable(value);
      if (detail) found.push({ code: 'invalid_character', detail, pointer });
    } else if (value !== null && typeof value === 'object') {
      const children: Array<[unknown, string]> = [];
      for (const [key, item] of Object.entries(value)) {
        const child = `${pointer}/${escapePointer(key)}`;
        const detail = unstorable(key);
        // A bad key is reported alone: what is under it is refused with it.
        if (detail) children.push([key, child]);
        else children.push([item, child]);
      }
      // Reversed onto the stack so entries come out in document order.
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
    }
  }
  return found;
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** A path some route serves, with a method none of them answers (the 405 case). */
function methodNotServed(req: Request): boolean {
  const allowed = allowedMethods(req.app, req.path);
  return allowed.length > 0 && !allowed.includes(req.method);
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

function tooDeep(): ApiError {
  return ApiError.invalidRequest(
    [
      {
        code: 'too_deep',
        detail: `Objects and arrays may be nested at most ${MAX_JSON_DEPTH} levels deep.`,
        pointer: '',
      },
    ],
    `The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`,
  );
}

/**
 * body-parser reports a body its Content-Encoding cannot decode (gzip that is not gzip, a
 * truncated stream) as the bare zlib error with status 400 and no `type`: a client fault.
 */
function isUndecodableBody(err: unknown): boolean {
  const e = err as { status?: unknown; type?: unknown };
  return e?.status === 400 && e.type === undefined && !(err instanceof ApiError);
}

/**
 * JSON bodies only, at most 1 MiB once decompressed, at most MAX_JSON_DEPTH levels deep, and a
 * JSON object at the top. Failures become problem documents: 415 for another media type or
 * content encoding, 413 when too large, 400 (pointer "") when malformed, undecodable or too deep.
 * The depth is checked on the bytes before JSON.parse, so nothing recursive ever sees a deeper body.
 */
export function jsonBodyMiddlewares(publicBaseUrl: string) {
  const parse = express.json({
    limit: MAX_BODY_BYTES,
    strict: false,
    type: () => true,
    verify: (_req, _res, bytes) => {
      if (jsonDepthExceeds(bytes, MAX_JSON_DEPTH)) throw tooDeep();
    },
  });
  return [
    (req: Request, res: Response, next: NextFunction) => {
      // No body is read for a method the path does not serve: the router answers it with a
      // plain 405 and Allow, whatever the body holds (malformed, too large, another type).
      if (!hasBody(req) || methodNotServed(req)) {
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
        if (err) {
          if (isUndecodableBody(err)) {
            return next(
              ApiError.invalidRequest(
                [
                  {
                    code: 'invalid_encoding',
                    detail: 'The body could not be decoded with its Content-Encoding.',
                    pointer: '',
                  },
                ],
                'The request body does not match its Content-Encoding.',
              ),
            );
          }
          return next(err);
        }
        if (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)) {
          return next(
            ApiError.invalidRequest(
              [{ code: 'invalid_type', detail: 'The body must be a JSON object.', pointer: '' }],
              'The request body must be a JSON object.',
            ),
          );
        }
        const unstorableFields = unstorableTextEntries(req.body);
        if (unstorableFields.length > 0) return next(ApiError.invalidRequest(unstorableFields));
        next();
      });
    },
    (err: unknown, req: Request, res: Response, _next: NextFunction) =>
      sendProblem(req, res, err, publicBaseUrl),
  ];
}
