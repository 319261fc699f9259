import type { TestApp } from '../setup/test-app';

type OrgLike = { site: { id: string }; auth: Record<string, string> };

/** `…/sites/{siteId}/orders` followed by `rest`. */
export const ordersPath = (org: OrgLike, rest = '') => `/api/v1/sites/${org.site.id}/orders${rest}`;

/** A valid order body (one line of sku-42, 49.90 EUR, placed 20 Nov 2026 10:15 UTC); overrides replace top-level fields. */
export function orderBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    placedAt: '2026-11-20T10:15:00.000Z',
    currency: 'EUR',
    total: 4990,
    lines: [{ productId: 'sku-42', quantity: 1, amount: 4990 }],
    ...overrides,
  };
}

/** PUT …/orders/{externalId} of `body` (the caller checks the answer). */
export const putOrder = (t: TestApp, org: OrgLike, externalId: string, body: unknown) =>
  t
    .http()
    .put(ordersPath(org, `/${encodeURIComponent(externalId)}`))
    .set(org.auth)
    .send(body as object);
