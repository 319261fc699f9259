import { publicFilters } from './public-filters';
import type { ViewRecord } from './view.records';

/** The one mapping of a views row to the view resource (workflows-v1 §4). */
export function presentView(v: ViewRecord) {
  return {
    id: v.id,
    siteId: v.siteId,
    name: v.name,
    description: v.description,
    filters: publicFilters(v.filter),
    createdAt: new Date(v.createdAt).toISOString(),
    updatedAt: new Date(v.updatedAt).toISOString(),
  };
}
