import { ProblemEntry } from '../../common/errors/api-error';
import { collectQuery } from '../../common/query/query-params';
import { FILTERS, filterFaultsError } from '../filters/filter-registry';
import type { ConversationFilter } from '../filters/filter-values';

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** A JSON number as the decimal text the listing's parser reads (no exponent). */
function decimalText(n: number): string {
  const text = String(n);
  return /e/i.test(text) ? n.toFixed(20).replace(/0+$/, '').replace(/\.$/, '') : text;
}

/**
 * Parses filters given as a JSON object (exports' and deletion jobs' `filters`, saved views,
 * alerts): the listing's parameters as JSON under the listing's rules, faults located by pointer
 * under `base` (`/filters/labels.all/1`). Throws invalid_request or invalid_filter as the listing
 * does. Each parameter's JSON kind is its registry entry's (FilterParam.json): repeatable filters
 * are arrays of strings, score bounds numbers, flags booleans, the others strings.
 */
export function parseFilterObject(
  given: Record<string, unknown>,
  base = '/filters',
  shapeFaults: ProblemEntry[] = [],
): ConversationFilter {
  const faults: ProblemEntry[] = [...shapeFaults];
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(given)) {
    const pointer = `${base}/${escape(name)}`;
    const spec = FILTERS.param(name);
    if (!spec) {
      faults.push({ code: 'unknown_field', detail: `${name} is not a listing filter.`, pointer });
      continue;
    }
    if (spec.json === 'strings') {
      if (!Array.isArray(value)) {
        faults.push({ code: 'invalid_type', detail: `${name} must be an array of strings.`, pointer });
        continue;
      }
      const bad = value.flatMap((v, i) => (typeof v === 'string' ? [] : [i]));
      if (bad.length) {
        for (const i of bad)
          faults.push({ code: 'invalid_type', detail: 'must be a string.', pointer: `${pointer}/${i}` });
        continue;
      }
      query[name] = value as string[];
    } else if (spec.json === 'boolean') {
      if (typeof value !== 'boolean') {
        faults.push({ code: 'invalid_type', detail: `${name} must be a boolean.`, pointer });
        continue;
      }
      query[name] = String(value);
    } else if (spec.json === 'number') {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        faults.push({ code: 'invalid_type', detail: `${name} must be a number.`, pointer });
        continue;
      }
      query[name] = decimalText(value);
    } else {
      if (typeof value !== 'string') {
        faults.push({ code: 'invalid_type', detail: `${name} must be a string.`, pointer });
        continue;
      }
      query[name] = value;
    }
  }

  // Values one by one, so that a fault names the array element (`/filters/keywords/2`).
  const values: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(query)) {
    const spec = FILTERS.param(name)!;
    const list = Array.isArray(raw) ? raw : [raw];
    const parsed: unknown[] = [];
    let whole = true;
    for (const [i, item] of list.entries()) {
      const { values: one, faults: itemFaults } = collectQuery({ [name]: item }, { [name]: spec });
      for (const f of itemFaults)
        faults.push({
          code: f.code,
          detail: f.detail,
          pointer: Array.isArray(raw) ? `${base}/${escape(name)}/${i}` : `${base}/${escape(name)}`,
        });
      // A repeatable parameter parses to a list even from one value: keep its items, not the list.
      const value = (one as Record<string, unknown>)[name];
      if (itemFaults.length) whole = false;
      else parsed.push(...(Array.isArray(raw) && Array.isArray(value) ? value : [value]));
    }
    if (whole) values[name] = Array.isArray(raw) ? parsed : parsed[0];
  }

  const built = FILTERS.build(values, (name) => given[name] !== undefined);
  const located = (entries: ProblemEntry[]) => entries.flatMap((e) => locate(e, query, base));
  const error = filterFaultsError([...faults, ...located(built.faults)], located(built.filterFaults));
  if (error) throw error;
  return built.filter;
}

/**
 * A fault the shared filter builder names by parameter, as pointer entries: one per array element
 * at fault when the parameter says which elements a fault is about (FilterParam.faultyElements:
 * unknown tokens, labels.none tokens), else the key.
 */
function locate(entry: ProblemEntry, query: Record<string, string | string[]>, base: string): ProblemEntry[] {
  if (!('parameter' in entry)) return [entry];
  const name = entry.parameter;
  const key = `${base}/${escape(name)}`;
  const list = query[name];
  const bad = Array.isArray(list) ? (FILTERS.param(name)?.faultyElements?.(list, entry) ?? []) : [];
  if (!bad.length) return [{ code: entry.code, detail: entry.detail, pointer: key }];
  return bad.map((i) => ({ code: entry.code, detail: entry.detail, pointer: `${key}/${i}` }));
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The `filters` object and `view` id of a request body that takes either or both (exports,
 * deletion jobs), their type faults added to `faults`: `filters` is {} when absent or not an
 * object, `view` undefined when absent or not a string.
 */
export function filtersAndViewOf(
  body: Record<string, unknown>,
  faults: ProblemEntry[],
): { filters: Record<string, unknown>; view: string | undefined } {
  let filters: Record<string, unknown> = {};
  if (body.filters !== undefined) {
    if (!isObject(body.filters))
      faults.push({ code: 'invalid_type', detail: 'filters must be an object.', pointer: '/filters' });
    else filters = body.filters;
  }
  if (body.view !== undefined && typeof body.view !== 'string')
    faults.push({ code: 'invalid_type', detail: 'view must be a view id (view_…).', pointer: '/view' });
  return { filters, view: typeof body.view === 'string' ? body.view : undefined };
}
