import type { ConversationFilter } from '../search/listing/conversation-filter';

/** At most this many views per site (workflows-v1 §4): 409 conflict beyond. */
export const MAX_VIEWS_PER_SITE = 500;

/** A views row; `filter` is the parsed filter as stored. */
export interface ViewRecord {
  id: string;
  organizationId: string;
  siteId: string;
  name: string;
  description: string | null;
  filter: ConversationFilter;
  createdAt: Date;
  updatedAt: Date;
}

export const VIEW_COLUMNS = `id, organization_id AS "organizationId", site_id AS "siteId", name, description,
  filter, created_at AS "createdAt", updated_at AS "updatedAt"`;
