/**
 * The adversarial requests of a living site (bench:live, bench/live-walk-index.ts): per filter
 * family, a filter that the campaign (bench/lib/living-traffic.ts: the newest rows of the site,
 * one agent, English, hosted, pending, unrated) fails, alone and with count=true.
 */
import { Q_WORDS } from './transcript-words';
import { MixContext, QueryValue, TOKENS, WORDS } from '../query-mix';

const DAY = 86_400_000;

/** The adversarial case of each filter family: the campaign (the newest rows) fails every one. */
export function adversarialCases(
  ctx: MixContext,
): Array<{ name: string; family: string; query: Record<string, QueryValue> }> {
  const from30 = new Date(ctx.newest.getTime() - 30 * DAY).toISOString();
  const cases: Array<{ name: string; family: string; query: Record<string, QueryValue> }> = [
    { name: 'channel=web', family: 'channel', query: { channel: 'web' } },
    { name: 'language=de', family: 'language', query: { language: 'de' } },
    { name: 'agentId=<busiest agent>', family: 'agent', query: { agentId: ctx.agents[0] } },
    { name: 'feedback=negative', family: 'feedback', query: { feedback: 'negative' } },
    { name: 'labelStatus=labeled', family: 'labelStatus', query: { labelStatus: 'labeled' } },
    {
      name: 'language=de&labelStatus=labeled',
      family: 'labelStatus',
      query: { language: 'de', labelStatus: 'labeled' },
    },
    {
      name: 'labels.all=resolution:unresolved',
      family: 'labels.all',
      query: { 'labels.all': 'resolution:unresolved' },
    },
    {
      name: `labels.all=${TOKENS.rare}`,
      family: 'labels.all',
      query: { 'labels.all': TOKENS.rare },
    },
    {
      name: 'labels.any=resolution:unresolved|resolution:abandoned',
      family: 'labels.any',
      query: { 'labels.any': 'resolution:unresolved|resolution:abandoned' },
    },
    {
      name: 'labels.none (30 days)',
      family: 'labels.none',
      query: { 'labels.none': 'visitor_frustrated:true', 'labels.all': 'purchase_intent:true', from: from30 },
    },
    { name: 'quality.min=0.8', family: 'scores', query: { 'quality.min': '0.8' } },
    { name: `keywords=${WORDS.common}`, family: 'keywords', query: { keywords: WORDS.common } },
    { name: `q=${Q_WORDS.commonDe}`, family: 'q', query: { q: Q_WORDS.commonDe } },
  ];
  return cases.flatMap((c) => [
    c,
    { ...c, name: `${c.name}&count=true`, query: { ...c.query, count: 'true' } },
  ]);
}
