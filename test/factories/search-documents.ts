import { toDocument } from '../../src/search/opensearch/conversation-index';

type Row = Parameters<typeof toDocument>[0];

/**
 * The OpenSearch document of a conversation of site `siteId` that exists only in the index (no
 * row in Postgres), for tests of what OpenSearch alone answers: a web conversation in English,
 * pending, created at `createdAt`, with no messages, feedback or scores; `over` sets any column.
 */
export function syntheticDocument(siteId: string, id: string, createdAt: Date, over: Partial<Row> = {}) {
  return toDocument({
    id,
    organization_id: 'org_Synthetic',
    site_id: siteId,
    title: 'Synthetic',
    channel: 'web',
    language: 'en',
    agent_id: 'agt_Synthetic',
    agent_version_id: 'agtv_Synthetic',
    label_status: 'pending',
    label_tokens: [],
    created_at: createdAt,
    updated_at: createdAt,
    message_count: 0,
    feedback_positive: 0,
    feedback_negative: 0,
    score_quality: null,
    score_service: null,
    score_trust: null,
    search_version: '1',
    ...over,
  });
}
