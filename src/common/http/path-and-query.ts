import type { NextFunction, Request, Response } from 'express';
import { ApiError, ProblemEntry } from '../errors/api-error';
import { unstorable } from './body-parsing';

function decodes(path: string): string | undefined {
  try {
    return decodeURIComponent(path);
  } catch {
    return undefined;
  }
}

/**
 * Refuses, before any route runs, a path or query PostgreSQL could not even compare against:
 * a path holding NUL (or percent-encoding that does not decode) names no resource, so it is a
 * 404 `not_found`; a query parameter holding NUL is a 400 with one `invalid_character` entry per
 * parameter. Without this, `GET /api/v1/sites/%00` reached the database and failed with a 500.
 */
export function pathAndQueryMiddleware() {
  return (req: Request, _res: Response, next: NextFunction) => {
    const path = decodes(req.path);
    if (path === undefined || path.includes('\u0000')) return next(ApiError.notFound());
    const faults: ProblemEntry[] = [];
    const query = (req.query ?? {}) as Record<string, unknown>;
    for (const [name, raw] of Object.entries(query)) {
      const values = Array.isArray(raw) ? raw : [raw];
      const detail =
        unstorable(name) ??
        values.map((v) => (typeof v === 'string' ? unstorable(v) : undefined)).find(Boolean);
      if (detail) faults.push({ code: 'invalid_character', detail, parameter: name });
    }
    if (faults.length > 0) return next(ApiError.invalidRequest(faults));
    next();
  };
}
