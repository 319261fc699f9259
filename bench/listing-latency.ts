/**
 * Latency of the conversation listing's query engine on a seeded database, per hard case:
 * `DATABASE_URL=… npx ts-node -T bench/listing-latency.ts --site site_… [--runs 30]`.
 * Measures what the HTTP handler does after parsing: the page search, loading the rows, and
 * (for the count figures) meta.count. Prints median and p99 in milliseconds per case.
 */
import { performance } from 'node:perf_hooks';
import { createDataSource } from '../src/database/data-source';
import { ConversationsRepository } from '../src/conversations/conversations.repository';
import { parseListingQuery } from '../src/conversations/dto/listing-query';
import { PostgresConversationSearch } from '../src/search/postgres/postgres-conversation-search';
import { CASES } from './listing-latency-cases';

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .reduce<string[][]>(
      (acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc),
      [],
    ),
);
const site = args.site;
const runs = Number(args.runs ?? 30);

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
  return { median: Math.round(at(0.5) * 10) / 10, p99: Math.round(at(0.99) * 10) / 10 };
}

async function main() {
  if (!site) throw new Error('--site is required');
  const ds = await createDataSource(process.env.DATABASE_URL!, { poolSize: 4 }).initialize();
  const search = PostgresConversationSearch.standalone(ds);
  const repo = new ConversationsRepository(ds);
  const cases = await CASES(ds, site);
  const rows: Array<Record<string, unknown>> = [];
  for (const [name, query] of Object.entries(cases)) {
    const { filter } = parseListingQuery(query);
    const page = async () => {
      const result = await search.page(site, filter, { limit: 25 });
      await repo.findManyInSite(
        site,
        result.items.map((i) => i.id),
      );
      return result;
    };
    const first = await page(); // warm-up
    const pageMs: number[] = [];
    const countMs: number[] = [];
    let count = { value: 0, capped: false };
    for (let i = 0; i < runs; i++) {
      let t = performance.now();
      await page();
      pageMs.push(performance.now() - t);
      t = performance.now();
      count = await search.count(site, filter, 10_000);
      countMs.push(performance.now() - t);
    }
    // Deep paging: the 5th page of the same filter.
    let after = first.items[first.items.length - 1];
    for (let p = 0; p < 3 && after; p++)
      after = (await search.page(site, filter, { limit: 25, after })).items.at(-1)!;
    const deepMs: number[] = [];
    if (after) {
      for (let i = 0; i < Math.min(runs, 10); i++) {
        const t = performance.now();
        await search.page(site, filter, { limit: 25, after });
        deepMs.push(performance.now() - t);
      }
    }
    rows.push({
      case: name,
      rows: first.items.length,
      count: `${count.value}${count.capped ? '+' : ''}`,
      page: stats(pageMs),
      count_ms: stats(countMs),
      page5: deepMs.length ? stats(deepMs) : null,
    });
    process.stderr.write('.');
  }
  process.stderr.write('\n');
  for (const r of rows) {
    const p = r.page as { median: number; p99: number };
    const c = r.count_ms as { median: number; p99: number };
    const d = r.page5 as { median: number; p99: number } | null;
    console.log(
      `| ${r.case} | ${r.rows} | ${r.count} | ${p.median} | ${p.p99} | ${c.median} | ${c.p99} | ${d ? `${d.median} / ${d.p99}` : '–'} |`,
    );
  }
  await search.close();
  await ds.destroy();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
