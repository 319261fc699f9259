/**
 * `value` with its means and scores (`mean`, `quality`, `service`, `trust`) rounded to 12
 * significant digits: two plans sum the same doubles in different orders (last-bit differences).
 */
export function roundMeans(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(roundMeans);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        typeof v === 'number' && (k === 'mean' || ['quality', 'service', 'trust'].includes(k))
          ? Number(v.toPrecision(12))
          : roundMeans(v),
      ]),
    );
  return value;
}
