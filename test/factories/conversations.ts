import { expect } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { CriterionResult, CRITERIA, FLAGS } from '../../src/labels/taxonomy';
import { LabeledOutcome } from '../../src/labels/label-outcome';
import { LabelWriter } from '../../src/labeling/label-writer.service';
import { QueryValues, queryString } from './query-string';
import type { TestApp } from '../setup/test-app';

export const AGENT = {
  id: 'agt_TestAgent0001',
  name: 'Shop helper',
  version: 3,
  versionId: 'agtv_TestAgentV0003',
};

/** A valid recording body; overrides replace top-level fields. */
export function conversationBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    title: `Question about order ${randomBytes(3).toString('hex')}`,
    channel: 'web',
    language: 'en',
    agent: AGENT,
    messages: [
      { role: 'shopper', blocks: [{ type: 'text', text: 'Where is my order?' }] },
      { role: 'agent', blocks: [{ type: 'text', text: 'It ships tomorrow.' }] },
    ],
    ...overrides,
  };
}

/** POST …/conversations of a recording body (`conversationBody(overrides)`); the caller checks the answer. */
export const postConversation = (
  t: TestApp,
  org: { site: { id: string }; auth: Record<string, string> },
  overrides: Record<string, unknown> = {},
  siteId = org.site.id,
) => t.http().post(`/api/v1/sites/${siteId}/conversations`).set(org.auth).send(conversationBody(overrides));

/** Records a conversation through the API and returns its public representation. */
export async function recordConversation(
  t: TestApp,
  org: { site: { id: string }; auth: Record<string, string> },
  overrides: Record<string, unknown> = {},
  siteId = org.site.id,
) {
  const res = await postConversation(t, org, overrides, siteId);
  if (res.status !== 201) throw new Error(`recording failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: string; createdAt: string; [key: string]: unknown };
}

/** Records `n` default conversations, one after another; their ids, oldest first. */
export async function recordConversations(
  t: TestApp,
  org: Parameters<typeof recordConversation>[1],
  n: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await recordConversation(t, org)).id);
  return ids;
}

/** POST …/conversations/{id}/messages: appends `messages` to the conversation (the caller checks the answer). */
export const appendMessages = (
  t: TestApp,
  org: { site: { id: string }; auth: Record<string, string> },
  id: string,
  messages: unknown[],
) =>
  t.http().post(`/api/v1/sites/${org.site.id}/conversations/${id}/messages`).set(org.auth).send({ messages });

/**
 * Records three conversations titled `Parcel 0`, `Parcel 1` and `Parcel 2`, created on 1, 2 and
 * 3 October 2026 (UTC), in that order; returns them in that order.
 */
/** A message as the API shows it (its id any msg_ id): its role, time, rating and blocks. */
export const shownMessage = (
  role: string,
  createdAt: unknown,
  rating: string | null,
  ...blocks: unknown[]
) => ({
  id: expect.stringMatching(/^msg_/),
  role,
  createdAt,
  rating,
  blocks,
});

export async function recordParcels(t: TestApp, org: Parameters<typeof recordConversation>[1]) {
  const parcels = [];
  for (let i = 0; i < 3; i++)
    parcels.push(
      await recordConversation(t, org, {
        title: `Parcel ${i}`,
        createdAt: new Date(Date.UTC(2026, 9, 1 + i)).toISOString(),
      }),
    );
  return parcels;
}

/** A labeled outcome; criteria default to pass, flags to false. */
export function labeledOutcome(
  overrides: Partial<LabeledOutcome> & {
    failing?: string[];
    raised?: string[];
    notApplicable?: string[];
  } = {},
): LabeledOutcome {
  const { failing = [], raised = [], notApplicable = [], ...rest } = overrides;
  const criteria: Record<string, CriterionResult> = {};
  for (const c of CRITERIA)
    criteria[c] = failing.includes(c) ? 'fail' : notApplicable.includes(c) ? 'not_applicable' : 'pass';
  const flags: Record<string, boolean> = {};
  for (const f of FLAGS) flags[f] = raised.includes(f);
  return {
    status: 'labeled',
    judge: { kind: 'heuristic', model: null, version: '1' },
    resolution: 'resolved',
    reviewReason: 'none',
    flags,
    criteria,
    scores: { quality: 0.8, service: 0.7, trust: 0.9 },
    rationale: 'test',
    ...rest,
  };
}

export async function label(
  app: INestApplicationContext,
  conversationId: string,
  outcome: Parameters<LabelWriter['write']>[1] = labeledOutcome(),
) {
  const result = await app.get(LabelWriter).write(conversationId, outcome);
  if (!result.written) throw new Error(`label not written: ${result.reason}`);
  return result;
}

/** What a request of a site needs of its organization (createOrganization's result). */
type SiteOrg = { site: { id: string }; auth: Record<string, string> };

/** GET of a site's conversations `resource` ('' or '/stats'); arrays in `query` repeat the parameter. */
function getConversations(t: TestApp, org: SiteOrg, resource: string, query: QueryValues, siteId: string) {
  return t
    .http()
    .get(`/api/v1/sites/${siteId}/conversations${resource}${queryString(query)}`)
    .set(org.auth);
}

/** GET the listing with a query object. */
export const listConversations = (t: TestApp, org: SiteOrg, query: QueryValues = {}, siteId = org.site.id) =>
  getConversations(t, org, '', query, siteId);

/** GET the statistics (…/conversations/stats) with a query object. */
export const getStats = (t: TestApp, org: SiteOrg, query: QueryValues = {}, siteId = org.site.id) =>
  getConversations(t, org, '/stats', query, siteId);

/**
 * Every page of a site's listing (`o.siteId`, default the organization's), `o.limit` a page with
 * count=true and the raw query `o.query` (e.g. 'channel=hosted'), following nextCursor; each page
 * must answer 200, and its time is pushed onto `o.times` when given. Returns the ids in order and
 * the first page's count.
 */
export async function everyPage(
  t: TestApp,
  org: SiteOrg,
  o: { limit: number; query?: string; siteId?: string; times?: number[] },
): Promise<{ ids: string[]; count: unknown }> {
  const ids: string[] = [];
  let count: unknown;
  let cursor: string | null = null;
  do {
    const started = Date.now();
    const res: {
      status: number;
      body: { data: Array<{ id: string }>; meta: { nextCursor: string | null; count?: unknown } };
    } = await t
      .http()
      .get(
        `/api/v1/sites/${o.siteId ?? org.site.id}/conversations?limit=${o.limit}&count=true${o.query ? `&${o.query}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      )
      .set(org.auth);
    o.times?.push(Date.now() - started);
    expect(res.status).toBe(200);
    count ??= res.body.meta.count;
    ids.push(...res.body.data.map((c) => c.id));
    cursor = res.body.meta.nextCursor;
  } while (cursor);
  return { ids, count };
}

/** A time `minutesAgo` minutes before now, ISO 8601 UTC with milliseconds. */
export function ago(minutes: number): string {
  return new Date(Date.now() - minutes * 60_000).toISOString();
}
