import { Q_PHRASES, Q_WORDS } from './lib/transcript-words';

/**
 * The benchmark's query mix: listing requests (GET /api/v1/sites/{siteId}/conversations) that
 * cover every filter alone and in combination, with the hard cases the query engine must stay
 * fast on (see docs in README "Benchmark").
 *
 * Words and label tokens are picked by their measured frequency on data made by the seed
 * command (`npm run bench:vocabulary` prints them); the share each request actually matches is
 * measured again by every bench run and written in the results, so a drift in the generator
 * shows up there.
 */

/** What the mix needs to know about the seeded site; read from the database by the bench. */
export interface MixContext {
  siteId: string;
  /** The site's agents, most conversations first. */
  agents: string[];
  /** Creation time of the site's newest conversation. */
  newest: Date;
}

export type QueryValue = string | string[];

export interface MixRequest {
  /** Short stable name, used in the results. */
  name: string;
  /** Why this request is in the mix. */
  description: string;
  /** Query parameters as sent (repeated parameters as arrays). */
  query: Record<string, QueryValue>;
  /** 1 for the first page; N > 1: the N-th page, reached by following nextCursor from page 1. */
  page?: number;
}

/**
 * Title words of the seed generator by their measured share of the benched site's titles
 * (1,000,000 conversations, bench/results/vocabulary.json). The generator's most common word
 * is in about 4% of titles (its head words are split over six languages), so "common" here is
 * the densest word there is; "almost everything" is covered by label tokens and channel=web.
 */
export const WORDS = {
  /** 4.3% of titles: the most common word of the site. */
  common: 'retour',
  /** 4.1% of titles. */
  commonToo: 'order',
  /** 1.45% of titles. */
  mid: 'discount',
  /** 0.29% of titles: too rare for the newest rows to fill a page, too common for a tiny probe. */
  midLow: 'monquibel',
  /** 0.011% of titles. */
  rare: 'arrano',
  /** In no title. */
  none: 'zyxwvutsrq',
  /** A two-word phrase in 0.12% of titles. */
  phrase: 'order delivery',
} as const;

/** Label tokens by their measured share of the site's labeled conversations (80% of the site). */
export const TOKENS = {
  /** 98.6% */
  almostAll: 'safe_response:pass',
  /** 80.0% */
  commonToo: 'grounded:pass',
  /** 50.0% */
  common: 'resolution:resolved',
  /** 12.0% */
  flagMid: 'visitor_frustrated:true',
  /** 10.0% */
  mid: 'review_reason:product',
  /** 8.0% */
  flagLow: 'human_requested:true',
  /** 3.0% */
  rareToo: 'policy_compliant:fail',
  /** 1.5% */
  rare: 'abusive_visitor:true',
  /** 0.41%: the rarest token. */
  rareThree: 'safe_response:fail',
} as const;

/** WORDS.phrase with its words swapped: each word common, the phrase in almost no title. */
const PHRASE_REVERSED = WORDS.phrase.split(' ').reverse().join(' ');

const DAY = 86_400_000;
const HOUR = 3_600_000;

/** An ISO timestamp `msAgo` before the newest conversation, to the hour, with an offset. */
function before(ctx: MixContext, msAgo: number): string {
  const t = new Date(Math.floor((ctx.newest.getTime() - msAgo) / HOUR) * HOUR);
  return t.toISOString().replace('.000Z', 'Z');
}

export function buildMix(ctx: MixContext): MixRequest[] {
  const topAgent = ctx.agents[0];
  const rareAgent = ctx.agents[ctx.agents.length - 1];
  const deep = { from: before(ctx, 80 * DAY), to: before(ctx, 80 * DAY - HOUR) };
  const deepDay = { from: before(ctx, 60 * DAY), to: before(ctx, 59 * DAY) };

  return [
    // No filter and single equality filters.
    { name: 'all', description: 'no filter, first page (default limit 25)', query: {} },
    { name: 'all-limit100', description: 'no filter, limit=100', query: { limit: '100' } },
    { name: 'channel-web', description: 'channel=web (most conversations)', query: { channel: 'web' } },
    {
      name: 'channel-playground',
      description: 'channel=playground (fewest)',
      query: { channel: 'playground' },
    },
    { name: 'language-nl', description: 'language=nl', query: { language: 'nl' } },
    { name: 'agent-top', description: 'agentId of the busiest agent', query: { agentId: topAgent } },
    { name: 'agent-rare', description: 'agentId of the quietest agent', query: { agentId: rareAgent } },
    { name: 'feedback-negative', description: 'feedback=negative', query: { feedback: 'negative' } },
    { name: 'feedback-positive', description: 'feedback=positive', query: { feedback: 'positive' } },
    {
      name: 'status-failed',
      description: 'labelStatus=failed (rare status)',
      query: { labelStatus: 'failed' },
    },
    { name: 'status-pending', description: 'labelStatus=pending', query: { labelStatus: 'pending' } },

    // Creation-time windows.
    { name: 'window-1h-80d', description: 'one-hour window 80 days back', query: { ...deep } },
    { name: 'window-1d-60d', description: 'one-day window 60 days back', query: { ...deepDay } },
    { name: 'from-7d', description: 'from only: the last 7 days', query: { from: before(ctx, 7 * DAY) } },
    { name: 'to-85d', description: 'to only: older than 85 days', query: { to: before(ctx, 85 * DAY) } },

    // Title keywords.
    {
      name: 'kw-common',
      description: `keyword in about half the titles ("${WORDS.common}")`,
      query: { keywords: WORDS.common },
    },
    {
      name: 'kw-mid',
      description: `keyword in about 1% of titles ("${WORDS.mid}")`,
      query: { keywords: WORDS.mid },
    },
    {
      name: 'kw-rare',
      description: `keyword in about 0.01% of titles ("${WORDS.rare}")`,
      query: { keywords: WORDS.rare },
    },
    { name: 'kw-none', description: 'keyword in no title', query: { keywords: WORDS.none } },
    {
      name: 'kw-phrase',
      description: `two-word phrase ("${WORDS.phrase}")`,
      query: { keywords: WORDS.phrase },
    },
    {
      name: 'kw-common+rare',
      description: 'two keywords, one common and one rare: all must appear',
      query: { keywords: [WORDS.common, WORDS.rare] },
    },
    {
      name: 'kw-common+common',
      description: 'two common keywords',
      query: { keywords: [WORDS.common, WORDS.commonToo] },
    },
    {
      name: 'kw-common+channel+language',
      description: 'common keyword with channel and language',
      query: { keywords: WORDS.common, channel: 'hosted', language: 'de' },
    },
    {
      name: 'kw-mid+window',
      description: 'mid keyword in a one-day window 60 days back',
      query: { keywords: WORDS.mid, ...deepDay },
    },

    // Label tokens.
    {
      name: 'labels-common',
      description: `labels.all, one common token (${TOKENS.common})`,
      query: { 'labels.all': TOKENS.common },
    },
    {
      name: 'labels-common2',
      description: 'labels.all, two common tokens',
      query: { 'labels.all': [TOKENS.common, TOKENS.commonToo] },
    },
    {
      name: 'labels-rare',
      description: `labels.all, one rare token (${TOKENS.rare})`,
      query: { 'labels.all': TOKENS.rare },
    },
    {
      name: 'labels-rare3',
      description: 'labels.all, three rare tokens',
      query: { 'labels.all': [TOKENS.rare, TOKENS.rareToo, TOKENS.rareThree] },
    },
    {
      name: 'labels-any',
      description: 'labels.any, one group of two tokens',
      query: { 'labels.any': `${TOKENS.rare}|${TOKENS.rareToo}` },
    },
    {
      name: 'labels-any2',
      description: 'labels.any, two groups',
      query: { 'labels.any': [`${TOKENS.rare}|${TOKENS.rareToo}`, `${TOKENS.common}|${TOKENS.mid}`] },
    },
    {
      name: 'labels-none+all',
      description: 'labels.none narrowed by labels.all',
      query: { 'labels.all': TOKENS.common, 'labels.none': TOKENS.flagMid },
    },
    {
      name: 'labels-none+window',
      description: 'labels.none narrowed by a one-day window only',
      query: { 'labels.none': [TOKENS.flagMid, TOKENS.rare], ...deepDay },
    },
    {
      name: 'labels-none+any',
      description: 'labels.none narrowed by labels.any',
      query: { 'labels.any': `${TOKENS.rare}|${TOKENS.mid}`, 'labels.none': TOKENS.flagLow },
    },

    // Scores.
    {
      name: 'quality-band2',
      description: 'quality in a 2% band',
      query: { 'quality.min': '0.50', 'quality.max': '0.52' },
    },
    { name: 'service-min0.9', description: 'service.min=0.9', query: { 'service.min': '0.9' } },
    {
      name: 'service-band',
      description: 'service in a 5% band',
      query: { 'service.min': '0.30', 'service.max': '0.35' },
    },
    { name: 'trust-min0.95', description: 'trust.min=0.95 (high tail)', query: { 'trust.min': '0.95' } },
    { name: 'trust-max0.05', description: 'trust.max=0.05 (low tail)', query: { 'trust.max': '0.05' } },
    {
      name: 'scores-all3',
      description: 'all three scores bounded',
      query: { 'quality.min': '0.3', 'quality.max': '0.7', 'service.min': '0.5', 'trust.max': '0.8' },
    },
    {
      name: 'quality+labels+channel',
      description: 'quality band with a label token and channel',
      query: { 'quality.min': '0.8', 'labels.all': TOKENS.mid, channel: 'web', labelStatus: 'labeled' },
    },

    // Everything at once.
    {
      name: 'stacked',
      description: 'date range, channel, language, agent, feedback, keyword, label token and score together',
      query: {
        from: before(ctx, 45 * DAY),
        to: before(ctx, 15 * DAY),
        channel: 'web',
        language: 'en',
        agentId: topAgent,
        feedback: 'positive',
        keywords: WORDS.common,
        'labels.all': TOKENS.common,
        'quality.min': '0.5',
      },
    },

    // count=true (the bench also times each without count to get what count adds).
    { name: 'count-all', description: 'count=true, no filter (capped)', query: { count: 'true' } },
    {
      name: 'count-kw-rare',
      description: 'count=true, rare keyword',
      query: { keywords: WORDS.rare, count: 'true' },
    },
    {
      name: 'count-kw-mid',
      description: 'count=true, mid keyword',
      query: { keywords: WORDS.mid, count: 'true' },
    },
    {
      name: 'count-labels-rare3',
      description: 'count=true, three rare tokens',
      query: { 'labels.all': [TOKENS.rare, TOKENS.rareToo, TOKENS.rareThree], count: 'true' },
    },
    {
      name: 'count-channel-playground',
      description: 'count=true, channel=playground (dense: the count walks far)',
      query: { channel: 'playground', count: 'true' },
    },
    {
      name: 'count-window',
      description: 'count=true, one-day window 60 days back',
      query: { ...deepDay, count: 'true' },
    },
    {
      name: 'count-quality-band',
      description: 'count=true, quality in a 2% band',
      query: { 'quality.min': '0.50', 'quality.max': '0.52', count: 'true' },
    },

    // Issue 16: dense intersections with a count, reversed phrases, stacked dense columns, deep
    // pages of a rare token at limit 100.
    {
      name: 'count-kw-common+labels-common',
      description: `count=true, the most common keyword with a common label token ("${WORDS.common}", ${TOKENS.common})`,
      query: { keywords: WORDS.common, 'labels.all': TOKENS.common, count: 'true' },
    },
    {
      name: 'count-kw-common2+labels-all',
      description: `count=true, the second common keyword with the densest label token ("${WORDS.commonToo}", ${TOKENS.commonToo})`,
      query: { keywords: WORDS.commonToo, 'labels.all': TOKENS.commonToo, count: 'true' },
    },
    {
      name: 'kw-phrase-reversed',
      description: `two-word phrase reversed ("${PHRASE_REVERSED}": both words common, the phrase in almost no title)`,
      query: { keywords: PHRASE_REVERSED },
    },
    {
      name: 'count-kw-phrase-reversed',
      description: 'count=true, the reversed phrase',
      query: { keywords: PHRASE_REVERSED, count: 'true' },
    },
    {
      name: 'count-dense-columns',
      description:
        'count=true, dense column filters stacked: channel=web, labelStatus=labeled, feedback=positive, language=en',
      query: { channel: 'web', labelStatus: 'labeled', feedback: 'positive', language: 'en', count: 'true' },
    },
    {
      name: 'count-dense-columns+labels',
      description:
        'count=true, channel=web, labelStatus=labeled, two dense label tokens and a wide quality bound',
      query: {
        channel: 'web',
        labelStatus: 'labeled',
        'labels.all': [TOKENS.almostAll, TOKENS.commonToo],
        'quality.min': '0.2',
        count: 'true',
      },
    },
    // Issue 38: counts in the middle regime (300 to 10,000 matches) from up to five column
    // filters, with and without keywords: the plan chooser weighs the columns' joint density
    // (docs/query-engine.md, "Plans for a count"). The requests first, then more of the
    // same family (column quadruples, agents with tokens, tokens held and not, time ranges).
    {
      name: 'count-mid-hosted-it-negative-pending',
      description: 'count=true, channel=hosted, language=it, feedback=negative, labelStatus=pending',
      query: {
        channel: 'hosted',
        language: 'it',
        feedback: 'negative',
        labelStatus: 'pending',
        count: 'true',
      },
    },
    {
      name: 'count-mid-agent-hosted-unresolved',
      description: 'count=true, the busiest agent, channel=hosted, resolution:unresolved',
      query: { agentId: topAgent, channel: 'hosted', 'labels.all': 'resolution:unresolved', count: 'true' },
    },
    {
      name: 'count-mid-agent-hosted-it-unresolved',
      description: 'count=true, the busiest agent, channel=hosted, language=it, resolution:unresolved',
      query: {
        agentId: topAgent,
        channel: 'hosted',
        language: 'it',
        'labels.all': 'resolution:unresolved',
        count: 'true',
      },
    },
    {
      name: 'count-mid-hosted-it-negative-30d',
      description: 'count=true, channel=hosted, language=it, feedback=negative, the last 30 days',
      query: {
        channel: 'hosted',
        language: 'it',
        feedback: 'negative',
        from: before(ctx, 30 * DAY),
        count: 'true',
      },
    },
    {
      name: 'count-mid-agent-web-resolved',
      description: 'count=true, the busiest agent, channel=web, resolution:resolved (beyond the cap)',
      query: { agentId: topAgent, channel: 'web', 'labels.all': TOKENS.common, count: 'true' },
    },
    {
      name: 'count-mid-agent6-unresolved',
      description: 'count=true, the sixth agent and resolution:unresolved',
      query: { agentId: ctx.agents[5] ?? topAgent, 'labels.all': 'resolution:unresolved', count: 'true' },
    },
    {
      name: 'count-mid-agent2-web-frustrated',
      description: `count=true, the second agent, channel=web, a flag (${TOKENS.flagMid})`,
      query: {
        agentId: ctx.agents[1] ?? topAgent,
        channel: 'web',
        'labels.all': TOKENS.flagMid,
        count: 'true',
      },
    },
    {
      name: 'count-mid-agent-negative-product',
      description: `count=true, the busiest agent, feedback=negative, ${TOKENS.mid}`,
      query: { agentId: topAgent, feedback: 'negative', 'labels.all': TOKENS.mid, count: 'true' },
    },
    {
      name: 'count-mid-hosted-fr-two-tokens',
      description: `count=true, channel=hosted, language=fr, resolution:unresolved and ${TOKENS.mid}`,
      query: {
        channel: 'hosted',
        language: 'fr',
        'labels.all': ['resolution:unresolved', TOKENS.mid],
        count: 'true',
      },
    },
    {
      name: 'count-mid-nl-negative-resolved-calm',
      description: `count=true, language=nl, feedback=negative, ${TOKENS.common}, not ${TOKENS.flagMid}`,
      query: {
        language: 'nl',
        feedback: 'negative',
        'labels.all': TOKENS.common,
        'labels.none': TOKENS.flagMid,
        count: 'true',
      },
    },
    {
      name: 'count-mid-agent4-hosted-grounded-no-human',
      description: `count=true, the fourth agent, channel=hosted, ${TOKENS.commonToo}, not ${TOKENS.flagLow}`,
      query: {
        agentId: ctx.agents[3] ?? topAgent,
        channel: 'hosted',
        'labels.all': TOKENS.commonToo,
        'labels.none': TOKENS.flagLow,
        count: 'true',
      },
    },
    {
      name: 'count-mid-quiet-agent-web-resolved',
      description: 'count=true, the quietest agent, channel=web, resolution:resolved',
      query: { agentId: rareAgent, channel: 'web', 'labels.all': TOKENS.common, count: 'true' },
    },
    {
      name: 'count-mid-playground-es-positive-unresolved',
      description: 'count=true, channel=playground, language=es, feedback=positive, resolution:unresolved',
      query: {
        channel: 'playground',
        language: 'es',
        feedback: 'positive',
        'labels.all': 'resolution:unresolved',
        count: 'true',
      },
    },
    {
      name: 'count-mid-web-en-positive-7d',
      description: 'count=true, channel=web, language=en, feedback=positive, the last 7 days',
      query: {
        channel: 'web',
        language: 'en',
        feedback: 'positive',
        from: before(ctx, 7 * DAY),
        count: 'true',
      },
    },
    {
      name: 'count-mid-agent-es-labeled-14d',
      description: 'count=true, the busiest agent, language=es, labelStatus=labeled, the last 14 days',
      query: {
        agentId: topAgent,
        language: 'es',
        labelStatus: 'labeled',
        from: before(ctx, 14 * DAY),
        count: 'true',
      },
    },
    {
      name: 'count-mid-kw-hosted-en',
      description: `count=true, a keyword ("${WORDS.mid}") with channel=hosted and language=en`,
      query: { keywords: WORDS.mid, channel: 'hosted', language: 'en', count: 'true' },
    },
    {
      name: 'count-mid-kw-agent-resolved',
      description: `count=true, a keyword ("${WORDS.commonToo}") with the busiest agent and ${TOKENS.common}`,
      query: { keywords: WORDS.commonToo, agentId: topAgent, 'labels.all': TOKENS.common, count: 'true' },
    },
    {
      name: 'page5-labels-rare-limit100',
      description: `page 5 at limit=100 of the rarest token (${TOKENS.rareThree})`,
      query: { 'labels.all': TOKENS.rareThree, limit: '100' },
      page: 5,
    },
    {
      name: 'page10-kw-rare-token-limit100',
      description: `page 10 at limit=100 of a rare token (${TOKENS.rare})`,
      query: { 'labels.all': TOKENS.rare, limit: '100' },
      page: 10,
    },

    // Transcript search (workflows-v1 §1): words of every frequency and language of the seed's
    // transcripts (bench/lib/transcript-words.ts), a phrase, an exclusion, OR, alone and stacked.
    {
      name: 'q-common',
      description: `q, a word in about half the conversations ("${Q_WORDS.everywhere}": fr, es, nl)`,
      query: { q: Q_WORDS.everywhere },
    },
    {
      name: 'q-common+highlight',
      description: `q with highlight=true, a word in about half the conversations ("${Q_WORDS.everywhere}")`,
      query: { q: Q_WORDS.everywhere, highlight: 'true' },
    },
    {
      name: 'q-mid-en',
      description: `q, a word in about 5% of conversations ("${Q_WORDS.midEn}", en)`,
      query: { q: Q_WORDS.midEn },
    },
    {
      name: 'q-rare-de',
      description: `q, a word in about 0.5% of conversations ("${Q_WORDS.rareDe}", de)`,
      query: { q: Q_WORDS.rareDe },
    },
    {
      name: 'q-rare-es',
      description: `q, a word in about 0.25% of conversations ("${Q_WORDS.rareEs}", es: two lexemes, neither among the listed ones)`,
      query: { q: Q_WORDS.rareEs },
    },
    {
      name: 'q-handful-it',
      description: `q, a word in a handful of conversations per million ("${Q_WORDS.handfulIt}", it)`,
      query: { q: Q_WORDS.handfulIt },
    },
    {
      name: 'q-phrase-en',
      description: `q, a phrase of two common words (${Q_PHRASES.commonEn}, en)`,
      query: { q: Q_PHRASES.commonEn },
    },
    {
      name: 'q-exclusion-fr',
      description: `q, a common word without a phrase ("${Q_WORDS.commonFr} -${Q_PHRASES.freeShippingFr}", fr)`,
      query: { q: `${Q_WORDS.commonFr} -${Q_PHRASES.freeShippingFr}` },
    },
    {
      name: 'q-or-es',
      description: `q, a rare word OR a 6% one, then a common one ("${Q_WORDS.rareEs} OR garantía pedido", es)`,
      query: { q: `${Q_WORDS.rareEs} OR garantía pedido` },
    },
    {
      name: 'q-shopper-nl+language',
      description: `q.in=shopper, a Dutch word with language=nl ("bestelling")`,
      query: { q: 'bestelling', 'q.in': 'shopper', language: 'nl' },
    },
    {
      name: 'q-common-de+channel+labels',
      description: `q, a common German word with channel=web and a common label token ("${Q_WORDS.commonDe}")`,
      query: { q: Q_WORDS.commonDe, channel: 'web', 'labels.all': TOKENS.common },
    },
    {
      name: 'count-q-rare-de+window',
      description: `count=true, q of a 0.5% word in a one-day window 60 days back ("${Q_WORDS.rareDe}")`,
      query: { q: Q_WORDS.rareDe, ...deepDay, count: 'true' },
    },

    // Paging 20 pages deep with the cursor.
    { name: 'page20-all', description: 'page 20, no filter', query: {}, page: 20 },
    {
      name: 'page20-kw-common',
      description: 'page 20, common keyword',
      query: { keywords: WORDS.common },
      page: 20,
    },
    { name: 'page20-kw-mid', description: 'page 20, mid keyword', query: { keywords: WORDS.mid }, page: 20 },
    {
      name: 'page20-kw-midlow',
      description: 'page 20, keyword in 0.3% of titles',
      query: { keywords: WORDS.midLow },
      page: 20,
    },
    {
      name: 'page20-labels+channel',
      description: 'page 20, common token and channel',
      query: { 'labels.all': TOKENS.common, channel: 'hosted' },
      page: 20,
    },
  ];
}

/** The query string of a request (repeated parameters repeated), without the cursor. */
export function queryString(query: Record<string, QueryValue>, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    for (const v of Array.isArray(value) ? value : [value]) params.append(name, v);
  for (const [name, value] of Object.entries(extra)) params.append(name, value);
  const text = params.toString();
  return text ? `?${text}` : '';
}
