import type { EventRow } from './events.repository';

/** The one mapping of an event row to its public shape. */
export function presentEvent(e: EventRow) {
  return {
    id: e.id,
    type: e.type,
    createdAt: new Date(e.createdAt).toISOString(),
    siteId: e.siteId,
    data: { object: e.object },
  };
}
