import { ApiError, ProblemEntry } from '../errors/api-error';
import type { PageRequest } from '../paging/keyset-page';

/** Why one value of a query parameter was refused. */
export class ParamFault {
  constructor(
    readonly detail: string,
    readonly code = 'invalid_value',
  ) {}
}

export interface ParamSpec<T = unknown> {
  /** Repeatable parameters are collected into an array; others may appear once. */
  repeatable?: boolean;
  /** Parses one raw value; returns a ParamFault to refuse it. */
  parse(value: string): T | ParamFault;
}

export type ParsedQuery<S extends Record<string, ParamSpec>> = {
  [K in keyof S]?: S[K] extends ParamSpec<infer T> ? (S[K]['repeatable'] extends true ? T[] : T) : never;
};

/**
 * Parses a query string against its specs, collecting every fault: unknown_parameter for a name
 * not listed, duplicate_parameter for a single-valued parameter sent twice, and each bad value.
 * Returns the values that parsed and the faults, so a caller can add its own (all faults of a
 * request are reported together).
 */
export function collectQuery<S extends Record<string, ParamSpec>>(
  query: Record<string, unknown>,
  specs: S,
): { values: ParsedQuery<S>; faults: ProblemEntry[] } {
  const faults: ProblemEntry[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(query ?? {})) {
    const spec = Object.prototype.hasOwnProperty.call(specs, name) ? specs[name] : undefined;
    if (!spec) {
      faults.push({
        code: 'unknown_parameter',
        detail: `${name} is not a parameter of this endpoint.`,
        parameter: name,
      });
      continue;
    }
    const values = (Array.isArray(raw) ? raw : [raw]).map((v) => (typeof v === 'string' ? v : String(v)));
    if (!spec.repeatable && values.length > 1) {
      faults.push({ code: 'duplicate_parameter', detail: `${name} may be given once.`, parameter: name });
      continue;
    }
    const parsed: unknown[] = [];
    let bad = false;
    for (const value of values) {
      const result = spec.parse(value);
      if (result instanceof ParamFault) {
        faults.push({ code: result.code, detail: result.detail, parameter: name });
        bad = true;
        break;
      }
      parsed.push(result);
    }
    if (!bad) out[name] = spec.repeatable ? parsed : parsed[0];
  }
  return { values: out as ParsedQuery<S>, faults };
}

/** parseQuery, throwing one invalid_request listing every fault. */
export function parseQuery<S extends Record<string, ParamSpec>>(
  query: Record<string, unknown>,
  specs: S,
): ParsedQuery<S> {
  const { values, faults } = collectQuery(query, specs);
  if (faults.length > 0) throw ApiError.invalidRequest(faults);
  return values;
}

/** Common parameter parsers. */
export const params = {
  integer(min: number, max: number): ParamSpec<number> {
    return {
      parse: (v) =>
        /^\d{1,9}$/.test(v) && Number(v) >= min && Number(v) <= max
          ? Number(v)
          : new ParamFault(`must be an integer from ${min} to ${max}.`),
    };
  },
  boolean(): ParamSpec<boolean> {
    return {
      parse: (v) => (v === 'true' ? true : v === 'false' ? false : new ParamFault('must be true or false.')),
    };
  },
  oneOf<T extends string>(values: readonly T[]): ParamSpec<T> {
    return {
      parse: (v) =>
        (values as readonly string[]).includes(v)
          ? (v as T)
          : new ParamFault(`must be one of ${values.join(', ')}.`),
    };
  },
  /** Free text; an empty value means "not given" (returned as undefined). */
  cursor(): ParamSpec<string | undefined> {
    return { parse: (v) => (v === '' ? undefined : v) };
  },
};

/** The paging parameters of every list: `limit` (1-100; the lists default to 25) and `cursor`. */
export const PAGING_PARAMS = { limit: params.integer(1, 100), cursor: params.cursor() };

/** The page a plain list is asked for: PAGING_PARAMS parsed, `limit` defaulting to 25. */
export function parsePaging(query: Record<string, unknown>): PageRequest {
  const { limit = 25, cursor } = parseQuery(query, PAGING_PARAMS);
  return { limit, cursor };
}
