/** Query parameters as tests write them: an array repeats the parameter, undefined leaves it out. */
export type QueryValues = Record<string, string | number | boolean | string[] | undefined>;

/** `?a=1&b=x&b=y` for the values given, or '' when there are none. */
export function queryString(query: QueryValues): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) search.append(key, String(v));
  }
  const qs = search.toString();
  return qs ? `?${qs}` : '';
}
