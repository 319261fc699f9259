import type { DeliveryRecord, WebhookRecord } from './webhooks.repository';

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** The one mapping of a webhook row to its public shape (never the sealed secrets). */
export function presentWebhook(w: WebhookRecord, now: Date = new Date()) {
  const previousLive = w.previousSecretExpiresAt !== null && new Date(w.previousSecretExpiresAt) > now;
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    siteIds: w.siteIds,
    description: w.description,
    status: w.status,
    disabledReason: w.status === 'disabled' ? w.disabledReason : null,
    previousSecretExpiresAt: previousLive ? iso(w.previousSecretExpiresAt) : null,
    createdAt: iso(w.createdAt),
    updatedAt: iso(w.updatedAt),
  };
}

export function presentDelivery(d: DeliveryRecord) {
  return {
    id: d.id,
    eventId: d.eventId,
    attemptedAt: iso(d.attemptedAt),
    statusCode: d.statusCode,
    error: d.error,
    durationMs: d.durationMs,
  };
}
