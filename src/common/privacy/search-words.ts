/**
 * Search words are personal data (a shopper's words, typed back in a search): no log line, job
 * record or audit row keeps the value of a `q` or `keywords` parameter. Each value is replaced by
 * REDACTED, so what was asked stays readable (which parameters, how many keywords) and what was
 * searched for does not. `q.in` (where q looks) is not a search word and is kept.
 */
export const SEARCH_WORD_PARAMETERS: readonly string[] = ['q', 'keywords'];

/** What a search word is replaced by. */
export const REDACTED = '[redacted]';

/** `value` with each string in it (one, or an array's) replaced by REDACTED. */
function redactedValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactedValue);
  if (value === null || value === undefined) return value;
  return typeof value === 'object' ? redactSearchWords(value) : REDACTED;
}

/**
 * A copy of `value` where every `q` and `keywords` member, at any depth (a filter inside audit
 * details, a parsed query string), holds REDACTED in place of each of its values.
 */
export function redactSearchWords<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => redactSearchWords(item)) as T;
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, member]) => [
      key,
      isSearchWordParameter(key) ? redactedValue(member) : redactSearchWords(member),
    ]),
  ) as T;
}

/** `q`, `keywords`, and their bracketed forms (`q[]`, `keywords[0]`) as a query string may spell them. */
function isSearchWordParameter(name: string): boolean {
  const base = name.replace(/\[.*$/, '');
  return SEARCH_WORD_PARAMETERS.includes(base);
}

/**
 * A request URL with the value of each `q` and `keywords` parameter of its query string replaced
 * by REDACTED; the path, the other parameters and their order are kept as sent.
 */
export function redactSearchWordsInUrl(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  const hashAt = url.indexOf('#', start);
  const query = url.slice(start + 1, hashAt < 0 ? undefined : hashAt);
  const rewritten = query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      let name: string;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        name = rawName;
      }
      return isSearchWordParameter(name) && eq >= 0 ? `${rawName}=${REDACTED}` : pair;
    })
    .join('&');
  return `${url.slice(0, start + 1)}${rewritten}${hashAt < 0 ? '' : url.slice(hashAt)}`;
}
