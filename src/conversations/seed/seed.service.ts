import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LISTING_INDEX_COLUMNS } from '../../database/listing-indexes';
import { ROLLUP_TABLES, StatsRollupCompactor } from '../../search/rollups';
import {
  INSERT_MESSAGES,
  messageDrawParameters,
  messageTextParameters,
  SEED_MESSAGES_SQL,
} from './seed-transcripts';
import { generator, SEED_LANGUAGES, seedHash, titleWords } from './seed-vocabulary';
import { OrderSeeder } from '../../orders/order-seeder';

export interface SeedOptions {
  siteId: string;
  organizationId: string;
  conversations: number;
  /** Creation times spread over the last `days` days. */
  days: number;
  /** Share of conversations that carry a label (the rest: pending, failed, not_eligible). */
  labeledShare: number;
  /** Makes the generated texts repeatable: the same seed and options write the same texts. */
  randomSeed?: string;
  /** Called after each batch with the number written so far. */
  progress?: (written: number) => void;
  /**
   * Share of the conversations that lead to an order (0 to 1; none when absent): visitors, orders
   * and the rest of the store's orders, credited by the rules (OrderSeeder).
   */
  ordersShare?: number;
}

export interface SeedResult {
  siteId: string;
  conversations: number;
  messages: number;
  labelRecords: number;
  /** With ordersShare: the site's orders, and how many are credited to a conversation. */
  orders?: number;
  attributedOrders?: number;
  seconds: number;
}

const BATCH = 50_000;
const BULK_THRESHOLD = 200_000;
const SCORE_INDEX_COLUMNS = `created_at, ${LISTING_INDEX_COLUMNS}`;
/** The listing's indexes a bulk seed drops and rebuilds (definitions as in the migrations). */
const BULK_INDEXES: Record<string, string> = {
  conversations_search_idx:
    'ON conversations USING gin (search_terms, conversation_title_terms(site_id, title))',
  conversations_site_created_cover_idx: `ON conversations (site_id, created_at DESC, id COLLATE "C" DESC) INCLUDE (${LISTING_INDEX_COLUMNS})`,
  ...Object.fromEntries(
    ['quality', 'service', 'trust'].map((score) => [
      `conversations_site_score_${score}_idx`,
      `ON conversations (site_id, score_${score}) INCLUDE (${SCORE_INDEX_COLUMNS}) WHERE score_${score} IS NOT NULL`,
    ]),
  ),
  // The postings (a row per conversation and title term or rare token, written by a trigger).
  conversation_postings_idx: `ON conversation_postings (site_id, term, created_at DESC, id COLLATE "C" DESC) INCLUDE (${LISTING_INDEX_COLUMNS})`,
  // A conversation's postings by its id, for set-based deletion (SetBasedDeletion migration).
  conversation_postings_id_idx: 'ON conversation_postings (id)',
  // The review sample's candidates (ReviewCandidatesIndex migration).
  conversations_review_candidates_idx: `ON conversations (site_id, created_at DESC, id COLLATE "C" DESC) INCLUDE (${LISTING_INDEX_COLUMNS}) WHERE label_status = 'labeled' AND review_state IS DISTINCT FROM 'current'`,
  // Counts of stacked column filters (ConversationCellIndex migration).
  conversations_site_cell_idx:
    'ON conversations (site_id, channel, language, label_status, (feedback_negative > 0), (feedback_positive > 0), agent_id, created_at) INCLUDE (feedback_positive, feedback_negative, label_bits)',
  // Walks of the labeled or rated rows only (LivingSiteWalkIndexes migration).
  ...Object.fromEntries(
    [
      ['labeled', "label_status = 'labeled'"],
      ['negative', 'feedback_negative > 0'],
      ['positive', 'feedback_positive > 0'],
    ].map(([name, rows]) => [
      `conversations_site_${name}_created_idx`,
      `ON conversations (site_id, created_at DESC, id COLLATE "C" DESC) INCLUDE (${LISTING_INDEX_COLUMNS}) WHERE ${rows}`,
    ]),
  ),
  // Statistics of label filters by value (LabelValueIndex migration).
  conversations_site_label_value_idx:
    "ON conversations (site_id, label_bits) INCLUDE (channel, language, agent_id, feedback_positive, feedback_negative, score_quality, score_service, score_trust) WHERE label_status = 'labeled'",
};
/** The transcripts' indexes (TranscriptLanguageIndex, TranscriptListingOrderIndex migrations), dropped and rebuilt the same way. */
const TRANSCRIPT_BULK_INDEXES: Record<string, string> = {
  conversation_transcripts_search_idx: 'ON conversation_transcripts USING gin (site_id, language, document)',
  conversation_transcripts_site_created_idx:
    'ON conversation_transcripts (site_id, created_at DESC, conversation_id COLLATE "C" DESC)',
};
const HEAD_WORDS = 40;
/** The default of `--random-seed`. */
export const DEFAULT_RANDOM_SEED = 'seed';

/**
 * Titles of 3 to 7 words in a random panel language: each word 65% from the language's head of
 * common words (power law), else from its long tail (steeper power law), so some words are in
 * a large share of titles and many are in a handful.
 */
function titles(
  words: Record<string, string[]>,
  n: number,
  random: () => number,
): { titles: string[]; languages: string[] } {
  const out = { titles: new Array<string>(n), languages: new Array<string>(n) };
  for (let i = 0; i < n; i++) {
    const language = SEED_LANGUAGES[Math.floor(random() * SEED_LANGUAGES.length)];
    const w = words[language];
    const length = 3 + Math.floor(random() * 5);
    const title: string[] = [];
    for (let k = 0; k < length; k++) {
      title.push(
        random() < 0.65
          ? w[Math.floor(random() ** 1.5 * HEAD_WORDS)]
          : w[HEAD_WORDS + Math.floor(random() ** 3 * (w.length - HEAD_WORDS))],
      );
    }
    out.titles[i] = title.join(' ');
    out.languages[i] = language;
  }
  return out;
}

/**
 * Writes realistic synthetic conversations straight in Postgres (INSERT … SELECT over
 * generate_series: no rows cross the network), for demos and benchmarks. Per conversation:
 * a title of 3 to 7 words in its panel language (common shopping words plus a long tail of
 * product-like names, power-law distributed), one of 20 agents with versions 1 to 4, a channel,
 * 2 to 20 messages with transcripts in its language (seed-transcripts.ts) and ratings matching
 * the feedback counts, product engagement, and, for the labeled share, a label record with
 * consistent tokens, scores and failed criteria. Batch k draws from a generator seeded with
 * (randomSeed, k), in JS for titles and with setseed for Postgres' random(): the same seed and
 * options write the same texts, whichever of the two writers takes the batch.
 */
@Injectable()
export class SeedService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly orders: OrderSeeder,
  ) {}

  /** Rebuilds the indexes dropped for a bulk seed, as the migrations define them. */
  private async rebuildIndexes(indexes: Record<string, string>): Promise<void> {
    for (const [name, definition] of Object.entries(indexes)) {
      await this.dataSource.transaction(async (manager) => {
        await manager.query(`SET LOCAL maintenance_work_mem = '512MB'`);
        await manager.query(`SET LOCAL statement_timeout = 0`);
        await manager.query(`CREATE INDEX IF NOT EXISTS ${name} ${definition}`);
      });
    }
  }

  /** Writes one batch (conversations, messages, label records) in one transaction. */
  private async writeBatch(
    options: SeedOptions,
    words: Record<string, string[]>,
    batchSeed: number,
    refreshTranscripts: boolean,
    { from, to, n }: { from: Date; to: Date; n: number },
  ) {
    const batch = titles(words, n, generator(batchSeed));
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL gin_pending_list_limit = '32MB'`);
      await manager.query(`SET LOCAL synchronous_commit = off`);
      await manager.query(`SET LOCAL statement_timeout = 0`);
      // Compiling the transcript statements costs about a second and saves less than it costs.
      await manager.query(`SET LOCAL jit = off`);
      await manager.query(`SELECT setseed($1)`, [(batchSeed / 2 ** 32) * 2 - 1]);
      await manager.query(`CREATE TEMP TABLE seed_batch ON COMMIT DROP AS ${BATCH_SQL}`, [
        options.labeledShare,
        batch.titles,
        batch.languages,
        from,
        to,
      ]);
      await manager.query(INSERT_CONVERSATIONS, [options.siteId, options.organizationId]);
      await manager.query(
        `CREATE TEMP TABLE seed_messages ON COMMIT DROP AS ${SEED_MESSAGES_SQL}`,
        messageDrawParameters(),
      );
      await manager.query(INSERT_MESSAGES, messageTextParameters());
      await manager.query(INSERT_LABELS);
      // The searchable text of the batch (its migration backfills a database seeded before it).
      if (refreshTranscripts)
        await manager.query(`SELECT refresh_conversation_transcripts(ARRAY(SELECT id FROM seed_batch))`);
      const [c] = await manager.query(
        `SELECT sum(message_count)::int AS messages, count(*) FILTER (WHERE label_status <> 'pending')::int AS labels FROM seed_batch`,
      );
      return c as { messages: number; labels: number };
    });
  }

  async seed(options: SeedOptions): Promise<SeedResult> {
    const started = Date.now();
    const words = Object.fromEntries(SEED_LANGUAGES.map((l) => [l, titleWords(l)]));
    // Batches go from the oldest time slice to the newest, rows in time order within each, as
    // real traffic arrives: the table's physical order follows creation time.
    const span = options.days * 86_400_000;
    const start = Date.now() - span;
    const batches: Array<{ index: number; from: Date; to: Date; n: number }> = [];
    for (let offset = 0; offset < options.conversations; offset += BATCH) {
      const n = Math.min(BATCH, options.conversations - offset);
      batches.push({
        index: batches.length,
        from: new Date(start + (offset / options.conversations) * span),
        to: new Date(start + ((offset + n) / options.conversations) * span),
        n,
      });
    }
    let written = 0;
    let messages = 0;
    let labelRecords = 0;
    // Transcripts are made searchable batch by batch when the database has the function (a
    // database seeded before the TranscriptSearch migration is backfilled by it).
    const [{ refresh: refreshTranscripts }] = await this.dataSource.query(
      `SELECT to_regproc('refresh_conversation_transcripts') IS NOT NULL AS refresh`,
    );
    // A large seed drops the listing's (and transcripts') indexes and builds them once at the
    // end: much faster than maintaining them row by row. Searches are slow meanwhile.
    const bulk = options.conversations >= BULK_THRESHOLD;
    const bulkIndexes = { ...BULK_INDEXES, ...(refreshTranscripts ? TRANSCRIPT_BULK_INDEXES : {}) };
    if (bulk)
      for (const name of Object.keys(bulkIndexes))
        await this.dataSource.query(`DROP INDEX IF EXISTS ${name}`);
    try {
      // Two writers (one per core); each takes the oldest batch left.
      const next = () => batches.shift();
      const writer = async () => {
        for (let batch = next(); batch; batch = next()) {
          const batchSeed = seedHash(`${options.randomSeed ?? DEFAULT_RANDOM_SEED}:${batch.index}`);
          const counts = await this.writeBatch(options, words, batchSeed, refreshTranscripts, batch);
          written += batch.n;
          messages += Number(counts.messages) || 0;
          labelRecords += Number(counts.labels) || 0;
          options.progress?.(written);
        }
      };
      const outcomes = await Promise.allSettled([writer(), writer()]);
      const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      if (failed) throw failed.reason;
    } finally {
      if (bulk) await this.rebuildIndexes(bulkIndexes);
    }
    const orders = options.ordersShare
      ? await this.orders.seed({
          siteId: options.siteId,
          organizationId: options.organizationId,
          share: options.ordersShare,
          randomSeed: options.randomSeed ?? DEFAULT_RANDOM_SEED,
        })
      : undefined;
    // Each batch appended its rollup deltas (docs/statistics.md); the workers would fold them
    // within seconds, but a seed may run while none do (WORKERS=off, the bench): fold them
    // now, so counts and statistics read the site's steady state, not thousands of deltas.
    await new StatsRollupCompactor(this.dataSource).compactSite(options.siteId, { unbounded: true });
    // VACUUM cannot run in a transaction: lift the pool's statement timeout on one connection.
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.query(`SET statement_timeout = 0`);
      await runner.query(`VACUUM (ANALYZE) conversations`);
      await runner.query(`VACUUM (ANALYZE) conversation_postings`);
      // The transcript plans weigh a word by its lexeme statistics, and a capped count skips
      // the heap pages marked all-visible: unanalyzed, every word looked rare (50 matches) and
      // statistics with a common word probed conversations one by one (13 s instead of 4).
      await runner.query(`VACUUM (ANALYZE) conversation_transcripts`);
      await runner.query(`ANALYZE messages`);
      await runner.query(`ANALYZE label_records`);
      if (orders) await runner.query(`VACUUM (ANALYZE) orders`);
      // The fold deleted every delta row: left to autovacuum, a count over the site's cells
      // stepped over 300,000 dead index entries (60 ms instead of 1 on a 3,000,000 site).
      for (const table of ROLLUP_TABLES) await runner.query(`VACUUM (ANALYZE) ${table}`);
    } finally {
      await runner.query(`RESET statement_timeout`).catch(() => undefined);
      await runner.release();
    }
    return {
      siteId: options.siteId,
      conversations: written,
      messages,
      labelRecords,
      ...(orders ? { orders: orders.orders, attributedOrders: orders.attributed } : {}),
      seconds: Math.round((Date.now() - started) / 100) / 10,
    };
  }
}

// $1 labeled share, $2 titles, $3 their languages, $4..$5 the batch's time slice.
const BATCH_SQL = `
  WITH draw AS (
    SELECT g, title, language, random() AS r_chan, random() AS r_agent, random() AS r_ver, random() AS r_status,
      random() AS r_res, random() AS r_rev, random() AS r_msgs, random() AS r_fb, random() AS r_step,
      random() AS r_q, random() AS r_s, random() AS r_t, random() AS r_eng, random() AS r_page, random() AS r_null,
      date_trunc('milliseconds', $4::timestamptz + ($5::timestamptz - $4::timestamptz) * ((g - 1 + random()) / cardinality($2::text[]))) AS created_at,
      substr(md5(random()::text || clock_timestamp()::text || g::text), 1, 22) AS suffix
    FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t(title, language, g)
  ), base AS (
    SELECT d.*,
      CASE WHEN r_chan < 0.7 THEN 'web' WHEN r_chan < 0.92 THEN 'hosted' ELSE 'playground' END AS channel,
      1 + floor(power(r_agent, 1.6) * 20)::int AS agent_no,
      1 + floor(r_ver * 4)::int AS agent_version,
      2 + floor(19 * power(r_msgs, 2))::int AS message_count,
      CASE WHEN r_status < $1::float8 THEN 'labeled'
           WHEN r_status < $1::float8 + (1 - $1::float8) * 0.6 THEN 'pending'
           WHEN r_status < $1::float8 + (1 - $1::float8) * 0.8 THEN 'failed'
           ELSE 'not_eligible' END AS label_status
    FROM draw d
  ), titled AS (
    SELECT * FROM base
  ), judged AS (
    SELECT t.*,
      CASE WHEN r_res < 0.5 THEN 'resolved' WHEN r_res < 0.7 THEN 'partially_resolved' WHEN r_res < 0.9 THEN 'unresolved' ELSE 'abandoned' END AS resolution,
      CASE WHEN r_rev < 0.6 THEN 'none' WHEN r_rev < 0.72 THEN 'service' WHEN r_rev < 0.82 THEN 'product' WHEN r_rev < 0.88 THEN 'policy'
           WHEN r_rev < 0.96 THEN 'technical' ELSE 'safety' END AS review_reason,
      random() < 0.12 AS f_frustrated, random() < 0.08 AS f_human, random() < 0.35 AS f_purchase,
      random() < 0.07 AS f_scope, random() < 0.015 AS f_abusive,
      ARRAY[random(), random(), random(), random(), random(), random()] AS r_crit,
      CASE WHEN r_fb < 0.22 THEN 1 ELSE 0 END AS fb_pos,
      CASE WHEN r_fb > 0.91 THEN 1 ELSE 0 END AS fb_neg
    FROM titled t
  )
  SELECT j.g, j.r_chan, j.r_agent, j.r_ver, j.r_status, j.r_msgs, j.r_fb, j.r_step, j.r_q, j.r_s, j.r_t, j.r_eng, j.r_page,
    j.r_null, j.created_at, j.suffix, j.language, j.channel, j.agent_no, j.agent_version, j.message_count, j.label_status,
    j.title, j.resolution, j.review_reason, j.f_frustrated, j.f_human, j.f_purchase, j.f_scope, j.f_abusive, j.fb_pos, j.fb_neg,
    'conv_' || suffix AS id, 'lbl_' || suffix AS label_id,
    created_at + (message_count - 1) * make_interval(secs => 5 + floor(r_step * 55)) AS updated_at,
    CASE WHEN label_status = 'labeled' THEN array_remove(ARRAY[
      'grounded:' || CASE WHEN r_crit[1] < 0.1 THEN 'fail' WHEN r_crit[1] < 0.9 THEN 'pass' END,
      'answered_question:' || CASE WHEN r_crit[2] < 0.15 THEN 'fail' WHEN r_crit[2] < 0.95 THEN 'pass' END,
      'product_accuracy:' || CASE WHEN r_crit[3] < 0.06 THEN 'fail' WHEN r_crit[3] < 0.8 THEN 'pass' END,
      'policy_compliant:' || CASE WHEN r_crit[4] < 0.03 THEN 'fail' WHEN r_crit[4] < 0.7 THEN 'pass' END,
      'on_brand:' || CASE WHEN r_crit[5] < 0.05 THEN 'fail' WHEN r_crit[5] < 0.97 THEN 'pass' END,
      'safe_response:' || CASE WHEN r_crit[6] < 0.004 THEN 'fail' WHEN r_crit[6] < 0.99 THEN 'pass' END
    ], NULL) END AS criteria_tokens
  FROM judged j`;

const INSERT_CONVERSATIONS = `
  INSERT INTO conversations (id, organization_id, site_id, title, channel, language, agent_id, agent_name, agent_version,
    agent_version_id, entry_widget, has_page_context, page_type, page_product_id, page_category_name, page_url, metadata,
    created_at, updated_at, message_count, feedback_positive, feedback_negative, impressions, clicks, label_status,
    current_label_id, label_resolution, label_review_reason, score_quality, score_service, score_trust, failed_criteria, label_tokens)
  SELECT s.id, $2, $1, s.title, s.channel, s.language,
    'agt_SeedAgent' || lpad(s.agent_no::text, 2, '0'), 'Assistant ' || s.agent_no, s.agent_version,
    'agtv_SeedAgent' || lpad(s.agent_no::text, 2, '0') || 'v' || s.agent_version,
    CASE WHEN s.r_page < 0.3 THEN jsonb_build_object('id', 'wdg_' || (1 + floor(s.r_page * 10)::int), 'kind', 'bubble', 'name', 'Ask us') END,
    s.r_page < 0.8,
    CASE WHEN s.r_page < 0.8 THEN (ARRAY['product','category','home','cart','article'])[1 + floor(s.r_page * 6.24)::int] END,
    CASE WHEN s.r_page < 0.3 THEN 'sku-' || floor(s.r_eng * 5000)::int END,
    CASE WHEN s.r_page BETWEEN 0.3 AND 0.5 THEN 'category-' || floor(s.r_eng * 40)::int END,
    CASE WHEN s.r_page < 0.8 THEN 'https://shop.example/p/' || floor(s.r_eng * 5000)::int END,
    CASE WHEN s.channel = 'playground' THEN jsonb_build_object('scenario', 'seed', 'tester', 'seed') END,
    s.created_at, s.updated_at, s.message_count, s.fb_pos, s.fb_neg,
    floor(s.r_eng * 12)::int, floor(s.r_eng * s.r_eng * 3)::int,
    s.label_status,
    CASE WHEN s.label_status <> 'pending' THEN s.label_id END,
    CASE WHEN s.label_status = 'labeled' THEN s.resolution END,
    CASE WHEN s.label_status = 'labeled' THEN s.review_reason END,
    CASE WHEN s.label_status = 'labeled' AND s.r_null > 0.02 THEN round((0.25 + 0.75 * power(s.r_q, 0.6))::numeric, 3)::float8 END,
    CASE WHEN s.label_status = 'labeled' AND s.r_null > 0.03 THEN round((0.2 + 0.8 * power(s.r_s, 0.7))::numeric, 3)::float8 END,
    CASE WHEN s.label_status = 'labeled' AND s.r_null > 0.01 THEN round((0.3 + 0.7 * power(s.r_t, 0.5))::numeric, 3)::float8 END,
    CASE WHEN s.label_status = 'labeled' THEN
      ARRAY(SELECT split_part(c, ':', 1) FROM unnest(s.criteria_tokens) c WHERE c LIKE '%:fail') ELSE '{}' END,
    CASE WHEN s.label_status = 'labeled' THEN ARRAY[
      'resolution:' || s.resolution, 'review_reason:' || s.review_reason,
      'visitor_frustrated:' || s.f_frustrated, 'human_requested:' || s.f_human, 'purchase_intent:' || s.f_purchase,
      'out_of_scope:' || s.f_scope, 'abusive_visitor:' || s.f_abusive] || s.criteria_tokens ELSE '{}' END
  FROM seed_batch s
  ORDER BY s.created_at`;

const INSERT_LABELS = `
  INSERT INTO label_records (id, conversation_id, taxonomy_version, status, is_current, labeled_at, judge_kind, judge_model,
    judge_version, resolution, review_reason, flags, criteria, score_quality, score_service, score_trust, failed_criteria,
    tokens, rationale, error, created_at)
  SELECT c.current_label_id, c.id, '1.1', c.label_status, true,
    CASE WHEN c.label_status = 'labeled' THEN c.updated_at + interval '45 minutes' END,
    CASE WHEN c.label_status <> 'not_eligible' THEN 'heuristic' END, NULL, CASE WHEN c.label_status <> 'not_eligible' THEN 'seed' END,
    c.label_resolution, c.label_review_reason,
    CASE WHEN c.label_status = 'labeled' THEN jsonb_build_object(
      'visitor_frustrated', 'visitor_frustrated:true' = ANY(c.label_tokens), 'human_requested', 'human_requested:true' = ANY(c.label_tokens),
      'purchase_intent', 'purchase_intent:true' = ANY(c.label_tokens), 'out_of_scope', 'out_of_scope:true' = ANY(c.label_tokens),
      'abusive_visitor', 'abusive_visitor:true' = ANY(c.label_tokens)) END,
    CASE WHEN c.label_status = 'labeled' THEN (SELECT jsonb_object_agg(name,
        CASE WHEN (name || ':pass') = ANY(c.label_tokens) THEN 'pass' WHEN (name || ':fail') = ANY(c.label_tokens) THEN 'fail' ELSE 'not_applicable' END)
      FROM unnest(ARRAY['grounded','answered_question','product_accuracy','policy_compliant','on_brand','safe_response']) name) END,
    c.score_quality, c.score_service, c.score_trust, c.failed_criteria, c.label_tokens,
    CASE WHEN c.label_status = 'labeled' THEN 'Synthetic label written by the seed command.' END,
    CASE WHEN c.label_status = 'failed' THEN 'judge timed out after 3 attempts (seed)' WHEN c.label_status = 'not_eligible' THEN 'no shopper message (seed)' END,
    COALESCE(c.updated_at + interval '45 minutes', now())
  FROM conversations c JOIN seed_batch s ON s.id = c.id
  WHERE c.label_status <> 'pending'`;
