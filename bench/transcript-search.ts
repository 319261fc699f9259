/**
 * `npm run bench:transcript`: transcript search (workflows-v1 §1, "Speed") on both engines side
 * by side, on the bench database (`npm run bench:setup`) and a running OpenSearch
 * (`npm run opensearch:start`):
 *
 * 1. reindex into the alias BENCH_OS_INDEX (BENCH_TRANSCRIPT_REINDEX=off skips it);
 * 2. search: the first page of a one-word `q` for words of every frequency in several languages
 *    (target median ≤ 50 ms), phrases (≤ 100 ms), each also with highlight=true (adds ≤ 20 ms)
 *    and count=true (adds ≤ 100 ms), the variants and engines alternated request by request;
 *    each row says whether both engines gave the same first page (and count, and highlights);
 * 3. statistics with `q` (≤ 1 s);
 * 4. recording a 10-message conversation into a new site of the benched organization, alternated
 *    with the build before transcript search on the same database (BENCH_TRANSCRIPT_BASELINE):
 *    the median within 1.25 × the before build's;
 * 5. the index size on disk: Postgres' conversation_transcripts and its index, the OpenSearch
 *    index's store.
 *
 * Writes bench/results/transcript-search.{md,json} (BENCH_OUT renames them), with what each miss
 * is spent on; BENCH_TRANSCRIPT_RENDER=on writes the .md again from the .json.
 */
import { ChildProcess, execFileSync, execSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { benchEnv, benchLog, numberFrom, RESULTS_DIR } from './lib/bench-env';
import { createSite, getOnce, HttpTarget, ListingBody } from './lib/http-load';
import type { DatabaseRunReport, Engine } from './lib/side-by-side';
import {
  ENGINES,
  engineServices,
  reindex,
  reportWriter,
  sameListing,
  sideBySideRun,
  sideBySideSettings,
  startedReport,
  startProcess,
} from './lib/side-by-side';
import { percentile, summarize } from './lib/stats';
import { Q_PHRASES, Q_WORDS } from './lib/transcript-words';
import { queryString } from './query-mix';

/** The engines measured: both by default; BENCH_TRANSCRIPT_ENGINES=postgres measures one (no comparison). */
const RUN_ENGINES: Engine[] = (process.env.BENCH_TRANSCRIPT_ENGINES ?? ENGINES.join(','))
  .split(',')
  .filter((e): e is Engine => (ENGINES as string[]).includes(e));
const BOTH = RUN_ENGINES.length === ENGINES.length;
/** Whether both engines gave the same answer (undefined when only one engine runs). */
const compared = (same: () => boolean): boolean | undefined => (BOTH ? same() : undefined);

const ROOT = join(__dirname, '..');
/** The services' ports, one per engine. */
const PORTS = { postgres: 3111, opensearch: 3112 };
const LANGUAGES = ['fr', 'en', 'de', 'it', 'es', 'nl'];

/** workflows-v1 §1, "Speed". */
export const TRANSCRIPT_TARGETS = {
  wordMedianMs: 50,
  phraseMedianMs: 100,
  highlightAddsMs: 20,
  countAddsMs: 100,
  statsMedianMs: 1000,
  recordingRatio: 1.25,
};

interface Probe {
  name: string;
  q: string;
  kind: 'word' | 'phrase';
  /** Also sent to the statistics. */
  stats: boolean;
}

/** Words from about half the site to a handful of conversations, in five languages; phrases. */
const PROBES: Probe[] = [
  { name: 'word-half-fr-es-nl', q: Q_WORDS.everywhere, kind: 'word', stats: true },
  { name: 'word-common-fr', q: Q_WORDS.commonFr, kind: 'word', stats: true },
  { name: 'word-common-de', q: Q_WORDS.commonDe, kind: 'word', stats: false },
  { name: 'word-mid-it', q: Q_WORDS.midIt, kind: 'word', stats: false },
  { name: 'word-mid-en', q: Q_WORDS.midEn, kind: 'word', stats: true },
  { name: 'word-rare-de', q: Q_WORDS.rareDe, kind: 'word', stats: true },
  { name: 'word-rare-es', q: Q_WORDS.rareEs, kind: 'word', stats: false },
  { name: 'word-handful-nl', q: Q_WORDS.handfulNl, kind: 'word', stats: false },
  { name: 'word-handful-it', q: Q_WORDS.handfulIt, kind: 'word', stats: true },
  { name: 'word-none', q: Q_WORDS.none, kind: 'word', stats: false },
  { name: 'phrase-common-en', q: Q_PHRASES.commonEn, kind: 'phrase', stats: true },
  { name: 'phrase-fr', q: Q_PHRASES.freeShippingFr, kind: 'phrase', stats: false },
  { name: 'phrase-reversed-nl', q: Q_PHRASES.reversedNl, kind: 'phrase', stats: true },
];

/** The statistics request: every facet and score, as the dashboard asks. */
const STATS_QUERY = {
  facets: ['channel', 'language', 'agentId', 'labelStatus', 'feedback', 'labels'],
  scores: ['quality', 'service', 'trust'],
};

type Verdict = 'PASS' | 'FAIL' | 'n/a';

interface Row {
  section: 'search' | 'highlight' | 'count' | 'stats' | 'recording';
  name: string;
  query: string;
  engine: Engine | 'before';
  /** Conversations of the benched site the probe matches (Postgres, exact). */
  matches?: number | null;
  n: number;
  medianMs: number;
  p90Ms: number;
  /** highlight and count rows: median with the option minus the plain request's median. */
  addedMs?: number;
  /** recording: median over the before build's. */
  ratio?: number;
  target: string;
  verdict: Verdict;
  /** Both engines gave the same first page (ids in order; and count, and highlights). */
  same?: boolean;
}

interface Report extends DatabaseRunReport {
  runs: number;
  reindex?: { documents: number; seconds: number };
  rows: Row[];
  baseline?: string;
  size?: {
    postgres: { tableBytes: number; indexBytes: number };
    opensearch: { index: string; documents: number; storeBytes: number; primaryStoreBytes: number } | null;
  };
  notes: string[];
}

const log = benchLog('bench:transcript');

const verdict = (ok: boolean): Verdict => (ok ? 'PASS' : 'FAIL');

/** The probe's exact matches in the site: each conversation in its own language, as the engine renders `q`. */
async function exactMatches(dataSource: DataSource, siteId: string, probe: Probe): Promise<number | null> {
  const words = probe.q.replace(/"/g, '').trim().split(/\s+/);
  const tsquery = words.join(' <-> ');
  const condition = LANGUAGES.map(
    (l) => `(language = '${l}' AND document @@ to_tsquery('transcript_${l}', $2))`,
  ).join(' OR ');
  try {
    return await dataSource.transaction(async (m) => {
      await m.query(`SET LOCAL statement_timeout = '120s'`);
      const [{ n }] = await m.query(
        `SELECT count(*)::int AS n FROM conversation_transcripts WHERE site_id = $1 AND (${condition})`,
        [siteId, tsquery],
      );
      return n as number;
    });
  } catch (error) {
    log(`matches of ${probe.name}: ${(error as Error).message}`);
    return null;
  }
}

/**
 * Times `variants` (paths per engine), alternating variant and engine request by request
 * (after one warm-up each, whose bodies are returned).
 */
async function alternate(
  targets: Record<Engine, HttpTarget>,
  variants: string[],
  runs: number,
): Promise<{ times: Record<Engine, number[]>[]; bodies: Record<Engine, ListingBody>[] }> {
  const times = variants.map(() => ({ postgres: [], opensearch: [] }) as Record<Engine, number[]>);
  const bodies = variants.map(() => ({}) as Record<Engine, ListingBody>);
  for (const [v, path] of variants.entries())
    for (const engine of RUN_ENGINES) bodies[v][engine] = (await getOnce(targets[engine], path)).body;
  for (let i = 0; i < runs; i++)
    for (const [v, path] of variants.entries())
      for (const engine of (i + v) % 2 ? [...RUN_ENGINES].reverse() : RUN_ENGINES)
        times[v][engine].push((await getOnce(targets[engine], path)).ms);
  return { times, bodies };
}

function highlightsOf(body: ListingBody): string {
  return JSON.stringify(body.data.map((c) => (c as { highlights?: unknown }).highlights ?? null));
}

/**
 * The build before transcript search (the parent of the commit that added the TranscriptSearch
 * migration), extracted with `git archive` under var/bench-before/ and compiled once, unless
 * BENCH_TRANSCRIPT_BASELINE names a built checkout (or is `off`).
 */
function baselineBuild(env: Record<string, string | undefined>): string | undefined {
  const configured = env.BENCH_TRANSCRIPT_BASELINE;
  if (configured === 'off') return undefined;
  if (configured) return configured;
  const added = execFileSync(
    'git',
    [
      'log',
      '--diff-filter=A',
      '--format=%H',
      '--',
      'src/database/migrations/1763840000000-TranscriptSearch.ts',
    ],
    { cwd: ROOT, encoding: 'utf8' },
  )
    .trim()
    .split('\n')
    .pop();
  if (!added) throw new Error('no commit adds the TranscriptSearch migration: set BENCH_TRANSCRIPT_BASELINE');
  const commit = execFileSync('git', ['rev-parse', `${added}^`], { cwd: ROOT, encoding: 'utf8' }).trim();
  const dir = join(ROOT, 'var', 'bench-before', commit.slice(0, 12));
  if (!existsSync(join(dir, 'dist', 'main.js'))) {
    log(`building the build before transcript search (${commit.slice(0, 12)}) in ${dir}`);
    mkdirSync(dir, { recursive: true });
    execSync(`git archive ${commit} | tar -x -C ${JSON.stringify(dir)}`, { cwd: ROOT, stdio: 'inherit' });
    if (!existsSync(join(dir, 'node_modules')))
      symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    execFileSync('npx', ['tsc', '-b', 'tsconfig.build.json'], { cwd: dir, stdio: 'inherit' });
  }
  return dir;
}

/** A 10-message conversation of about 40 words a message, in one of the six languages. */
function recordingBody(i: number): object {
  const language = LANGUAGES[i % LANGUAGES.length];
  const words: Record<string, string[]> = {
    fr: 'bonjour ma commande de chaussures est arrivée abîmée je voudrais un remboursement ou un échange'.split(
      ' ',
    ),
    en: 'hello my order of shoes arrived damaged and I would like a refund or an exchange please'.split(' '),
    de: 'Hallo meine Bestellung der Schuhe ist beschädigt angekommen ich möchte eine Rückerstattung oder Umtausch'.split(
      ' ',
    ),
    it: 'buongiorno il mio ordine di scarpe è arrivato danneggiato vorrei un rimborso o un cambio'.split(' '),
    es: 'hola mi pedido de zapatos llegó dañado y quiero un reembolso o un cambio por favor'.split(' '),
    nl: 'hallo mijn bestelling van schoenen is beschadigd aangekomen ik wil een terugbetaling of ruilen'.split(
      ' ',
    ),
  };
  const text = (m: number) =>
    Array.from({ length: 40 }, (_, k) => words[language][(k + m + i) % words[language].length]).join(' ');
  return {
    title: `Recording probe ${i}: ${words[language].slice(1, 4).join(' ')}`,
    channel: 'web',
    language,
    agent: { id: 'agt_BenchRecord01', name: 'Bench', version: 1, versionId: 'agtv_BenchRecord01' },
    messages: Array.from({ length: 10 }, (_, m) => ({
      role: m % 2 ? 'agent' : 'shopper',
      blocks: [{ type: 'text', text: `${text(m)}.` }],
    })),
  };
}

async function record(target: HttpTarget, siteId: string, i: number): Promise<number> {
  const start = performance.now();
  const res = await fetch(`${target.baseUrl}/api/v1/sites/${siteId}/conversations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(recordingBody(i)),
  });
  const text = await res.text();
  const ms = performance.now() - start;
  if (res.status !== 201) throw new Error(`recording answered ${res.status}: ${text.slice(0, 300)}`);
  return ms;
}

async function indexSizes(
  dataSource: DataSource,
  opensearchUrl: string,
  alias: string,
): Promise<NonNullable<Report['size']>> {
  const [pg] = await dataSource.query(
    `SELECT pg_total_relation_size('conversation_transcripts')::bigint AS total,
            pg_relation_size('conversation_transcripts_search_idx')::bigint AS idx`,
  );
  let opensearch: NonNullable<Report['size']>['opensearch'] = null;
  try {
    const res = await fetch(`${opensearchUrl}/_cat/indices/${alias}?format=json&bytes=b`);
    const [index] = (await res.json()) as Array<Record<string, string>>;
    opensearch = {
      index: index.index,
      documents: Number(index['docs.count']),
      storeBytes: Number(index['store.size']),
      primaryStoreBytes: Number(index['pri.store.size']),
    };
  } catch (error) {
    log(`OpenSearch index size: ${(error as Error).message}`);
  }
  return { postgres: { tableBytes: Number(pg.total), indexBytes: Number(pg.idx) }, opensearch };
}

function render(report: Report): string {
  const f = (n: number | undefined) => (n === undefined ? '' : n.toFixed(1));
  const gib = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB`;
  const engines = [...new Set(report.rows.map((r) => r.engine).filter((e) => e !== 'before'))];
  // A report of one engine says so; one with no rows yet (written after the reindex) is of both.
  const both = engines.length !== 1;
  const lines = [
    both
      ? '# Transcript search, both engines side by side'
      : `# Transcript search, ${engines.join('')} alone`,
    '',
    `${report.status}. Started ${report.startedAt}, finished ${report.finishedAt ?? '…'}; ${report.machine.cores} cores, load average ${report.machine.load.map((l) => l.toFixed(1)).join(' → ')}. ${report.conversations?.toLocaleString('en-US') ?? '?'} conversations in the database${both ? '; one OpenSearch node' : ''}. HTTP times of one request at a time, ${report.runs} runs of each (after one warm-up), the plain request and its variants${both ? ' and the two engines' : ''} alternated request by request. Targets: workflows-v1 §1, "Speed". Command: \`npm run bench:transcript\`${both ? '' : ` with \`BENCH_TRANSCRIPT_ENGINES=${engines.join(',')}\``}.`,
    '',
  ];
  if (report.reindex)
    lines.push(
      `Reindexed ${report.reindex.documents.toLocaleString('en-US')} conversations into OpenSearch first in ${report.reindex.seconds.toFixed(0)} s.`,
      '',
    );
  const titles: Record<Row['section'], string> = {
    search: 'First page of `q`',
    highlight: '`highlight=true`: what it adds',
    count: '`count=true`: what it adds',
    stats: 'Statistics with `q` (every facet and score)',
    recording: 'Recording a 10-message conversation',
  };
  for (const section of Object.keys(titles) as Row['section'][]) {
    const rows = report.rows.filter((r) => r.section === section);
    if (!rows.length) continue;
    const judged = rows.filter((r) => r.verdict !== 'n/a');
    lines.push(
      `## ${titles[section]}`,
      '',
      `${judged.filter((r) => r.verdict === 'PASS').length} of ${judged.length} rows meet their target.`,
      '',
    );
    if (section === 'recording') {
      lines.push(
        report.baseline
          ? `Into a new site of the benched organization, alternated between the services; \`before\` is the build before transcript search (${report.baseline}) on the same database. Target: median ≤ ${TRANSCRIPT_TARGETS.recordingRatio} × before's.`
          : 'No build before transcript search was measured (BENCH_TRANSCRIPT_BASELINE=off), and no committed result holds a recording figure: not judged.',
        '',
        '| service | runs | median ms | p90 ms | × before | target | verdict |',
        '|---|---|---|---|---|---|---|',
        ...rows.map(
          (r) =>
            `| ${r.engine} | ${r.n} | ${f(r.medianMs)} | ${f(r.p90Ms)} | ${r.ratio === undefined ? '' : r.ratio.toFixed(2)} | ${r.target} | ${r.verdict} |`,
        ),
        '',
      );
      continue;
    }
    const added = section === 'highlight' || section === 'count';
    lines.push(
      `| request | q | matches | engine | median ms | p90 ms |${added ? ' adds ms |' : ''} same on both | target | verdict |`,
      `|---|---|---|---|---|---|${added ? '---|' : ''}---|---|---|`,
      ...rows.map(
        (r) =>
          `| ${r.name} | \`${r.query}\` | ${r.matches === undefined ? '' : (r.matches?.toLocaleString('en-US') ?? '?')} | ${r.engine} | ${f(r.medianMs)} | ${f(r.p90Ms)} |${added ? ` ${f(r.addedMs)} |` : ''} ${r.same === undefined ? '' : r.same ? 'yes' : 'NO'} | ${r.target} | ${r.verdict} |`,
      ),
      '',
    );
  }
  if (report.size) {
    const { postgres, opensearch } = report.size;
    lines.push(
      '## Index size on disk',
      '',
      '| engine | what | size |',
      '|---|---|---|',
      `| postgres | \`conversation_transcripts\` with its indexes (pg_total_relation_size) | ${gib(postgres.tableBytes)} |`,
      `| postgres | of which \`conversation_transcripts_search_idx\` (GIN) | ${gib(postgres.indexBytes)} |`,
      opensearch
        ? `| opensearch | index \`${opensearch.index}\` (${opensearch.documents.toLocaleString('en-US')} documents, every field, transcripts not in _source), store | ${gib(opensearch.storeBytes)} (primaries ${gib(opensearch.primaryStoreBytes)}) |`
        : '| opensearch | (not read) | |',
      '',
    );
  }
  const missed = report.rows.filter((r) => r.verdict === 'FAIL');
  if (missed.length)
    lines.push(
      '## Misses, and why',
      '',
      'What each row that misses its target is spent on (docs/query-engine.md, "Transcript search", and docs/opensearch.md).',
      '',
      ...missed.map((r) => `- ${missedBy(r)}: ${whyMissed(r)}`),
      '',
    );
  if (report.notes.length) lines.push('## Notes', '', ...report.notes.map((n) => `- ${n}`), '');
  return lines.join('\n');
}

/** "`name` on engine, section: measured against the target, by how much". */
function missedBy(r: Row): string {
  const bound = Number(/[\d.]+/.exec(r.target)?.[0]);
  const shown =
    r.section === 'recording'
      ? `${(r.ratio ?? NaN).toFixed(2)} × (${((r.ratio ?? NaN) / bound).toFixed(2)} × the bound)`
      : `${(r.addedMs ?? r.medianMs).toFixed(1)} ms${r.addedMs === undefined ? '' : ' added'} (${((r.addedMs ?? r.medianMs) - bound).toFixed(1)} ms over)`;
  return `\`${r.name}\` (\`${r.query}\`) on ${r.engine}, ${r.section}: ${shown} against ${r.target}`;
}

/** The cost behind a miss, by engine and measure: what the engine has to read for it. */
function whyMissed(r: Row): string {
  const phrase = r.query.startsWith('"');
  if (r.section === 'highlight') {
    const plain = r.medianMs - (r.addedMs ?? 0);
    const spread = r.p90Ms - r.medianMs;
    return `the page's stored texts are loaded and split into words, and the words that may share a stem with q's are stemmed by Postgres (one statement per page); the time grows with the words on the page${spread > (r.addedMs ?? 0) ? `. Here the plain request takes ${plain.toFixed(1)} ms, and the gap between the two medians is within their spread (the highlighted request's p90 is ${spread.toFixed(1)} ms above its median)` : ''}`;
  }
  if (r.engine !== 'postgres') return 'see docs/opensearch.md';
  switch (r.section) {
    case 'stats':
      return `statistics read every match: its transcript's heap row (a GIN index returns no column; about ten transcripts to an 8 kB page), then its conversation in the covering index for the facets and scores${phrase ? '; a phrase also reads the document of every transcript holding both words, to check their positions' : ''}. Past about 100,000 matches (fewer for a phrase) that takes more than a second on two cores`;
    case 'count':
      return phrase
        ? 'a phrase: every transcript holding both words is read to check their positions, until 10,001 match'
        : "the transcripts' GIN bitmap holds every match in the site before the first of the 10,001 counted rows is read";
    case 'search':
      return phrase
        ? 'a rare phrase of two common words: every transcript holding both words is read to check their positions (word-pair lexemes would make it an index read; not built)'
        : 'the plan is chosen from the lexeme statistics (docs/query-engine.md, "Plans")';
    default:
      return 'the transcript is rebuilt in the recording transaction';
  }
}

async function main(): Promise<void> {
  const env = benchEnv();
  const { apiKey, siteId, opensearchUrl, alias } = sideBySideSettings(env);
  const runs = numberFrom(env, 'BENCH_TRANSCRIPT_RUNS', 20);
  const statsRuns = numberFrom(env, 'BENCH_TRANSCRIPT_STATS_RUNS', 7);
  const recordings = numberFrom(env, 'BENCH_TRANSCRIPT_RECORDINGS', 100);
  const only = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(',').map((s) => s.trim())) : undefined;
  const outName = env.BENCH_OUT ?? 'transcript-search';
  // BENCH_TRANSCRIPT_RENDER=on: write the report's .md again from its .json, measuring nothing.
  if (env.BENCH_TRANSCRIPT_RENDER === 'on') {
    const saved = JSON.parse(readFileSync(join(RESULTS_DIR, `${outName}.json`), 'utf8')) as Report;
    writeFileSync(join(RESULTS_DIR, `${outName}.md`), render(saved));
    return;
  }
  const report: Report = {
    ...startedReport(),
    runs,
    rows: [],
    notes: [],
  };
  const write = reportWriter(RESULTS_DIR, outName, report, render);

  const baseline = baselineBuild(env);
  const run = {
    env,
    report,
    write,
    applicationName: 'bench-transcript',
    redisPrefix: 'sa_bench_transcript:',
  };
  await sideBySideRun(run, async ({ dataSource, serviceEnv, children, conversations: n }) => {
    if (env.BENCH_TRANSCRIPT_REINDEX !== 'off') {
      log(`reindexing ${n} conversations into ${alias} (search:reindex --delete-previous)`);
      report.reindex = reindex(serviceEnv);
      log(`reindex: ${report.reindex.documents} documents in ${report.reindex.seconds.toFixed(1)} s`);
      write();
    }

    const targets = await engineServices(serviceEnv, PORTS, RUN_ENGINES, apiKey, children);
    const base = `/api/v1/sites/${siteId}/conversations`;
    const probes = PROBES.filter((p) => !only || only.has(p.name));
    const matches = new Map<string, number | null>();

    for (const [i, probe] of probes.entries()) {
      try {
        if (env.BENCH_TRANSCRIPT_MATCHES !== 'off')
          matches.set(probe.name, await exactMatches(dataSource, siteId, probe));
        const paths = [
          base + queryString({ q: probe.q }),
          base + queryString({ q: probe.q, highlight: 'true' }),
          base + queryString({ q: probe.q, count: 'true' }),
        ];
        const { times, bodies } = await alternate(targets, paths, runs);
        const [plain, highlighted, counted] = bodies;
        const samePage = compared(() => sameListing(plain.postgres, plain.opensearch));
        const sameHighlights = compared(
          () =>
            sameListing(highlighted.postgres, highlighted.opensearch) &&
            highlightsOf(highlighted.postgres) === highlightsOf(highlighted.opensearch),
        );
        const sameCount = compared(() => sameListing(counted.postgres, counted.opensearch));
        const target =
          probe.kind === 'word' ? TRANSCRIPT_TARGETS.wordMedianMs : TRANSCRIPT_TARGETS.phraseMedianMs;
        for (const engine of RUN_ENGINES) {
          const stat = (v: number) => ({
            n: times[v][engine].length,
            medianMs: summarize(times[v][engine]).median,
            p90Ms: percentile(times[v][engine], 90),
          });
          const row = { name: probe.name, engine, matches: matches.get(probe.name) };
          const plainStat = stat(0);
          report.rows.push({
            section: 'search',
            ...row,
            query: probe.q,
            ...plainStat,
            target: `median ≤ ${target}`,
            verdict: verdict(plainStat.medianMs <= target),
            same: samePage,
          });
          for (const [v, section, adds, same] of [
            [1, 'highlight', TRANSCRIPT_TARGETS.highlightAddsMs, sameHighlights],
            [2, 'count', TRANSCRIPT_TARGETS.countAddsMs, sameCount],
          ] as const) {
            const s = stat(v);
            const addedMs = s.medianMs - plainStat.medianMs;
            report.rows.push({
              section,
              ...row,
              query: `${probe.q} ${section}=true`,
              ...s,
              addedMs,
              target: `adds ≤ ${adds}`,
              verdict: verdict(addedMs <= adds),
              same,
            });
          }
        }
        const medians = RUN_ENGINES.map((engine) => {
          const row = report.rows.find((r) => r.name === probe.name && r.engine === engine)!;
          return `${engine} ${row.medianMs.toFixed(1)} ms`;
        });
        log(
          `search ${i + 1}/${probes.length} ${probe.name} (${probe.q}, ${matches.get(probe.name) ?? '?'} matches): ${medians.join(', ')}${samePage === false ? ' DIFFERENT PAGES' : ''}${sameHighlights === false ? ' DIFFERENT HIGHLIGHTS' : ''}${sameCount === false ? ' DIFFERENT COUNTS' : ''}`,
        );
      } catch (error) {
        log(`search ${probe.name}: ${(error as Error).message}`);
        report.notes.push(`${probe.name}: ${(error as Error).message.slice(0, 300)}`);
      }
      write();
    }

    for (const probe of probes.filter((p) => p.stats)) {
      try {
        const path = `${base}/stats${queryString({ q: probe.q, ...STATS_QUERY })}`;
        const { times, bodies } = await alternate(targets, [path], statsRuns);
        const total = (b: unknown) => (b as { data: { total: number } }).data.total;
        const same = compared(() => total(bodies[0].postgres) === total(bodies[0].opensearch));
        for (const engine of RUN_ENGINES) {
          const medianMs = summarize(times[0][engine]).median;
          report.rows.push({
            section: 'stats',
            name: probe.name,
            query: probe.q,
            engine,
            matches: matches.get(probe.name),
            n: times[0][engine].length,
            medianMs,
            p90Ms: percentile(times[0][engine], 90),
            target: `median ≤ ${TRANSCRIPT_TARGETS.statsMedianMs}`,
            verdict: verdict(medianMs <= TRANSCRIPT_TARGETS.statsMedianMs),
            same,
          });
        }
        const rows = report.rows.slice(-RUN_ENGINES.length);
        log(
          `stats ${probe.name}: ${rows.map((r) => `${r.engine} ${r.medianMs.toFixed(0)} ms`).join(', ')}${same === false ? ' DIFFERENT TOTALS' : ''}`,
        );
      } catch (error) {
        log(`stats ${probe.name}: ${(error as Error).message}`);
        report.notes.push(`stats ${probe.name}: ${(error as Error).message.slice(0, 300)}`);
      }
      write();
    }

    if (!only || only.has('recording')) {
      await measureRecording({ report, targets, apiKey, baseline, serviceEnv, children, recordings });
      write();
    }

    report.size = await indexSizes(dataSource, opensearchUrl, alias);
    report.status = only ? `subset (${only.size} requests)` : 'complete';
  });
  log(`wrote bench/results/${outName}.md and .json`);
}

/**
 * Records `recordings` 10-message conversations through each service (and the build before
 * transcript search, on port 3113), one at a time, the services alternated, into a new site.
 */
async function measureRecording(o: {
  report: Report;
  targets: Record<Engine, HttpTarget>;
  apiKey: string;
  baseline: string | undefined;
  serviceEnv: NodeJS.ProcessEnv;
  children: ChildProcess[];
  recordings: number;
}): Promise<void> {
  const services: Array<{ name: Engine | 'before'; target: HttpTarget }> = RUN_ENGINES.map((engine) => ({
    name: engine,
    target: o.targets[engine],
  }));
  if (o.baseline) {
    try {
      const port = 3113;
      o.children.push(
        await startProcess(
          'main.js',
          { ...o.serviceEnv, PORT: String(port), SEARCH_BACKEND: 'postgres' },
          port,
          o.baseline,
        ),
      );
      services.push({ name: 'before', target: { baseUrl: `http://127.0.0.1:${port}`, apiKey: o.apiKey } });
      o.report.baseline = o.baseline;
    } catch (error) {
      o.report.notes.push(`the build before transcript search did not start: ${(error as Error).message}`);
    }
  }
  const siteId = await createSite(
    o.targets.postgres,
    `Recording probes ${new Date().toISOString()}`,
    'https://record.example',
  );
  const times = new Map(services.map((s) => [s.name, [] as number[]]));
  // Three unrecorded rounds first: each service's connections and plans warm.
  for (let i = -3; i < o.recordings; i++)
    for (const [k, s] of (i % 2 ? [...services].reverse() : services).entries()) {
      const ms = await record(s.target, siteId, (i + 3) * services.length + k);
      if (i >= 0) times.get(s.name)!.push(ms);
    }
  const before = times.get('before');
  const beforeMedian = before?.length ? summarize(before).median : undefined;
  for (const s of services) {
    const t = times.get(s.name)!;
    const medianMs = summarize(t).median;
    const ratio = beforeMedian && s.name !== 'before' ? medianMs / beforeMedian : undefined;
    o.report.rows.push({
      section: 'recording',
      name: 'record-10-messages',
      query: 'POST …/conversations, 10 messages of 40 words',
      engine: s.name,
      n: t.length,
      medianMs,
      p90Ms: percentile(t, 90),
      ratio,
      target: s.name === 'before' ? '' : `≤ ${TRANSCRIPT_TARGETS.recordingRatio} × before`,
      verdict: ratio === undefined ? 'n/a' : verdict(ratio <= TRANSCRIPT_TARGETS.recordingRatio),
    });
    log(
      `recording via ${s.name}: median ${medianMs.toFixed(1)} ms${ratio ? ` (${ratio.toFixed(2)} × before)` : ''}`,
    );
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
