/**
 * The traffic of a living site (`npm run bench:live`, docs/benchmark.md "A living site"), played
 * over HTTP against a service with its workers on: recordings at a rate, the last part of them a
 * campaign (one agent, one language, one channel), messages appended to open conversations,
 * ratings, label reviews and a deletion job. The labeling is the service's own workers'.
 */
import type { HttpTarget } from './http-load';
import { spread } from './stats';

/** What a recording of the campaign holds in common: the newest rows of the site all fail filters of every family. */
export const CAMPAIGN = {
  agent: { id: 'agt_LiveCampaign01', name: 'Campaign', version: 1, versionId: 'agtv_LiveCampaign01' },
  language: 'en',
  channel: 'hosted',
} as const;

/** Words of the recordings: English for the campaign, so `commande` or `Bestellung` match none of them. */
const WORDS: Record<string, string[]> = {
  en: 'hello my order of running shoes arrived late can you tell me when the parcel leaves the warehouse thanks'.split(
    ' ',
  ),
  fr: 'bonjour ma commande de chaussures est arrivée abîmée je voudrais un remboursement ou un échange merci'.split(
    ' ',
  ),
  de: 'hallo meine Bestellung von Schuhen kam beschädigt an ich möchte eine Rückerstattung oder einen Umtausch'.split(
    ' ',
  ),
};

const LANGUAGES = Object.keys(WORDS);
const CHANNELS = ['web', 'hosted', 'playground'];

/** The latencies and answers of one kind of write. */
export interface WriteFigures {
  sent: number;
  ok: number;
  /** Answers other than the expected status, by status (0: no answer). */
  refused: Record<string, number>;
  latencies: number[];
}

const figures = (): WriteFigures => ({ sent: 0, ok: 0, refused: {}, latencies: [] });

/** p50 / p99 / max of a kind of write, in ms. */
export function writeSummary(f: WriteFigures): {
  sent: number;
  ok: number;
  p50: number;
  p99: number;
  max: number;
} {
  const { p50, p99, max } = spread(f.latencies);
  return { sent: f.sent, ok: f.ok, p50, p99, max };
}

/** A recording's body: `messages` messages, in the campaign's agent, language and channel or a mixed one. */
export function recordingBody(i: number, campaign: boolean, agents: string[], messages = 8): unknown {
  const language = campaign ? CAMPAIGN.language : LANGUAGES[i % LANGUAGES.length];
  const words = WORDS[language];
  const agentId = campaign ? CAMPAIGN.agent.id : agents[i % agents.length];
  const text = (m: number) =>
    Array.from({ length: 24 }, (_, k) => words[(k * 7 + m + i) % words.length]).join(' ');
  return {
    title: `${words.slice(i % 5, (i % 5) + 3).join(' ')} ${i}`,
    channel: campaign ? CAMPAIGN.channel : CHANNELS[i % CHANNELS.length],
    language,
    agent: campaign
      ? CAMPAIGN.agent
      : { id: agentId, name: 'Live', version: 1, versionId: agentId.replace(/^agt_/, 'agtv_') },
    messages: Array.from({ length: messages }, (_, m) => ({
      role: m % 2 ? 'agent' : 'shopper',
      blocks: [{ type: 'text', text: `${text(m)}.` }],
    })),
  };
}

/** One request, timed; `expect` the status of a success. */
async function send(
  target: HttpTarget,
  method: string,
  path: string,
  body: unknown,
  expect: number,
  into: WriteFigures,
): Promise<unknown> {
  into.sent++;
  const start = performance.now();
  try {
    const res = await fetch(`${target.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    into.latencies.push(performance.now() - start);
    if (res.status !== expect) {
      into.refused[res.status] = (into.refused[res.status] ?? 0) + 1;
      return undefined;
    }
    into.ok++;
    return JSON.parse(text) as unknown;
  } catch {
    into.refused['0'] = (into.refused['0'] ?? 0) + 1;
    return undefined;
  }
}

/** The traffic's settings (env/flags of bench:live). */
export interface TrafficPlan {
  siteId: string;
  /** The site's agents (recordings outside the campaign go through them). */
  agents: string[];
  /** Recordings a second. */
  rate: number;
  /** Recordings in all, the last `campaign` of them the campaign's. */
  recordings: number;
  campaign: number;
  /** Messages per recording. */
  messages: number;
  /** Of every 10 recordings (outside the campaign): how many get one message appended later, how many a rating. */
  appendsPer10: number;
  ratingsPer10: number;
  /** Labeled conversations reviewed, spread over the run. */
  reviews: number;
  /** Conversations the deletion job's filter selects (one hour of an old day). */
  deletionFilters?: Record<string, unknown>;
}

export interface TrafficFigures {
  recordings: WriteFigures;
  appends: WriteFigures;
  ratings: WriteFigures;
  reviews: WriteFigures;
  deletion: WriteFigures;
  seconds: number;
}

/**
 * Plays `plan` against `target`: recordings at `rate` a second (each sent on its own schedule,
 * not waiting for the previous one), with appends and ratings on recent conversations, reviews
 * of labeled ones (`reviewIds`) and one deletion job; resolves when every request was answered.
 * `recorded` hears each recording answered 201: its id and when its answer came (performance.now()).
 */
export async function playTraffic(
  target: HttpTarget,
  plan: TrafficPlan,
  reviewIds: string[],
  log: (message: string) => void,
  recorded?: (id: string, answeredAt: number) => void,
): Promise<TrafficFigures> {
  const out: TrafficFigures = {
    recordings: figures(),
    appends: figures(),
    ratings: figures(),
    reviews: figures(),
    deletion: figures(),
    seconds: 0,
  };
  const base = `/api/v1/sites/${plan.siteId}/conversations`;
  const pending: Promise<unknown>[] = [];
  const started = performance.now();
  const reviewEvery = plan.reviews > 0 ? Math.max(1, Math.floor(plan.recordings / plan.reviews)) : 0;
  let reviewed = 0;
  if (plan.deletionFilters)
    pending.push(
      send(target, 'POST', `${base}/deletions`, { filters: plan.deletionFilters }, 202, out.deletion),
    );
  for (let i = 0; i < plan.recordings; i++) {
    const due = started + (i * 1000) / plan.rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const campaign = i >= plan.recordings - plan.campaign;
    pending.push(
      send(
        target,
        'POST',
        base,
        recordingBody(i, campaign, plan.agents, plan.messages),
        201,
        out.recordings,
      ).then(async (body) => {
        const data = (body as { data?: { id: string; messages: Array<{ id: string }> } } | undefined)?.data;
        if (data) recorded?.(data.id, performance.now());
        if (!data || campaign) return;
        // Later activity on a tenth of the recordings each: an appended message, a rating.
        await new Promise((r) => setTimeout(r, 2000));
        if (i % 10 < plan.appendsPer10)
          await send(
            target,
            'POST',
            `${base}/${data.id}/messages`,
            { messages: [{ role: 'shopper', blocks: [{ type: 'text', text: 'one more question' }] }] },
            201,
            out.appends,
          );
        if ((i + 5) % 10 < plan.ratingsPer10)
          await send(
            target,
            'PUT',
            `${base}/${data.id}/messages/${data.messages[1].id}/rating`,
            { rating: i % 3 === 0 ? 'negative' : 'positive' },
            200,
            out.ratings,
          );
      }),
    );
    if (reviewEvery && i % reviewEvery === 0 && reviewed < reviewIds.length) {
      const id = reviewIds[reviewed++];
      pending.push(
        send(
          target,
          'PUT',
          `${base}/${id}/review`,
          { reviewer: 'live-bench', resolution: i % 2 ? 'resolved' : 'unresolved', scores: { quality: 0.3 } },
          200,
          out.reviews,
        ),
      );
    }
    if (i > 0 && i % Math.max(1, Math.round(plan.rate * 30)) === 0)
      log(`traffic: ${i} of ${plan.recordings} recordings sent (${out.recordings.ok} answered 201)`);
  }
  await Promise.all(pending);
  out.seconds = (performance.now() - started) / 1000;
  return out;
}
