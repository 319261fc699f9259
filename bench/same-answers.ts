/**
 * `npm run bench:same-answers`: whether two builds of the service give the same answers on the
 * same database. Every request of the listing mix (each page it reaches, following its own
 * cursors, with `count=true`) and of the statistics mix is sent to both builds
 * (BENCH_BASE_URL and BENCH_COMPARE_URL); the listing's item ids (in order), counts and next
 * cursors, and the statistics' `data`, are compared. A change that should not change behaviour
 * (a refactoring of the engines, the filter registry) is checked with it before it lands.
 * Writes bench/results/<BENCH_OUT or same-answers>.json and exits 1 when any answer differs.
 *
 *   BENCH_BASE_URL=http://127.0.0.1:3101 BENCH_COMPARE_URL=http://127.0.0.1:3102 \
 *   BENCH_BASE_LABEL=this BENCH_COMPARE_LABEL=1de2366 npm run bench:same-answers
 */
import { isDeepStrictEqual } from 'node:util';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDataSource } from '../src/database/data-source';
import { benchEnv, DEFAULT_DATABASE_URL } from './lib/bench-env';
import { HttpTarget } from './lib/http-load';
import { mixContext } from './lib/mix-context';
import { buildMix, queryString } from './query-mix';
import { buildStatsMix } from './stats-bench';

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function get(target: HttpTarget, path: string): Promise<Answer> {
  const res = await fetch(`${target.baseUrl}${path}`, {
    headers: { authorization: `Bearer ${target.apiKey}` },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The pages of a listing request on one build, following its own cursors: ids, count, cursor. */
async function listingPages(
  target: HttpTarget,
  base: string,
  query: Record<string, string | string[]>,
  pages: number,
) {
  const out: Array<{
    status: number;
    ids?: string[];
    count?: unknown;
    nextCursor?: unknown;
    error?: unknown;
  }> = [];
  let cursor: string | undefined;
  for (let page = 1; page <= pages; page++) {
    const answer = await get(
      target,
      `${base}${queryString({ ...query, count: 'true', ...(cursor ? { cursor } : {}) })}`,
    );
    if (answer.status !== 200) {
      // A problem document's requestId is the request's own: everything else is compared.
      out.push({ status: answer.status, error: { ...answer.body, requestId: undefined } });
      break;
    }
    const data = answer.body.data as Array<{ id: string }>;
    const meta = answer.body.meta as { nextCursor: string | null; count?: unknown };
    out.push({
      status: 200,
      ids: data.map((item) => item.id),
      count: meta.count,
      nextCursor: meta.nextCursor,
    });
    if (!meta.nextCursor) break;
    cursor = meta.nextCursor;
  }
  return out;
}

async function main(): Promise<void> {
  const env = benchEnv();
  const apiKey = env.BENCH_API_KEY!;
  const siteId = env.BENCH_SITE_ID!;
  if (!env.BENCH_BASE_URL || !env.BENCH_COMPARE_URL)
    throw new Error('BENCH_BASE_URL and BENCH_COMPARE_URL are required');
  const a = { label: env.BENCH_BASE_LABEL ?? 'base', target: { baseUrl: env.BENCH_BASE_URL, apiKey } };
  const b = {
    label: env.BENCH_COMPARE_LABEL ?? 'compare',
    target: { baseUrl: env.BENCH_COMPARE_URL, apiKey },
  };
  const dataSource = await createDataSource(env.DATABASE_URL ?? DEFAULT_DATABASE_URL, {
    poolSize: 1,
  }).initialize();
  const ctx = await mixContext(dataSource, siteId);
  await dataSource.destroy();

  const listing = `/api/v1/sites/${siteId}/conversations`;
  const rows: Array<{
    kind: 'listing' | 'stats';
    name: string;
    same: boolean;
    pages?: number;
    [k: string]: unknown;
  }> = [];
  for (const r of buildMix(ctx)) {
    const pages = r.page ?? 1;
    const [left, right] = [
      await listingPages(a.target, listing, r.query, pages),
      await listingPages(b.target, listing, r.query, pages),
    ];
    const same = isDeepStrictEqual(left, right);
    rows.push({
      kind: 'listing',
      name: r.name,
      same,
      status: left[left.length - 1].status,
      pages: left.length,
      ...(same ? {} : { [a.label]: left, [b.label]: right }),
    });
  }
  for (const r of buildStatsMix(ctx)) {
    const path = `${listing}/stats${queryString(r.query)}`;
    const [left, right] = [await get(a.target, path), await get(b.target, path)];
    const pick = (x: Answer) => ({
      status: x.status,
      data: x.body.data ?? { ...x.body, requestId: undefined },
    });
    const same = isDeepStrictEqual(pick(left), pick(right));
    rows.push({
      kind: 'stats',
      name: r.name,
      same,
      status: left.status,
      ...(same ? {} : { [a.label]: pick(left), [b.label]: pick(right) }),
    });
  }

  const different = rows.filter((row) => !row.same);
  const report = {
    title: `Same answers: ${a.label} against ${b.label}`,
    at: new Date().toISOString(),
    site: siteId,
    requests: rows.length,
    listingRequests: rows.filter((r) => r.kind === 'listing').length,
    listingPages: rows.reduce((n, r) => n + (r.pages ?? 0), 0),
    statsRequests: rows.filter((r) => r.kind === 'stats').length,
    different: different.length,
    /** Requests whose (last) answer was not 200 on the first build: refusals compare too. */
    notOk: rows.filter((row) => row.status !== 200).map((row) => row.name),
    rows,
  };
  const dir = join(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${env.BENCH_OUT ?? 'same-answers'}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(
    `${report.requests} requests (${report.listingRequests} listing, ${report.listingPages} pages; ${report.statsRequests} statistics): ${different.length} answered differently${different.length ? `: ${different.map((r) => r.name).join(', ')}` : ''}; ${file}`,
  );
  if (different.length) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
