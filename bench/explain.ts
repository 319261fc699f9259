/**
 * `npm run bench:explain -- NAME...`: EXPLAIN (ANALYZE, BUFFERS) of every statement the query
 * engine runs for the named requests of the mix (all when none is named), with the SQL timing.
 */
import { seededBenchSite } from './lib/bench-database';
import { explain, settingsComment, SqlTimer } from './lib/sql-timing';
import { mixContext } from './lib/mix-context';
import { buildMix } from './query-mix';

async function main(names: string[]): Promise<void> {
  const { siteId, dataSource } = await seededBenchSite('bench-explain', 4);
  const timer = new SqlTimer(dataSource);
  try {
    const mix = buildMix(await mixContext(dataSource, siteId)).filter(
      (r) => names.length === 0 || names.includes(r.name),
    );
    for (const r of mix) {
      const t = await timer.time(siteId, r.query, r.page ?? 1, 5);
      console.log(
        `\n=== ${r.name} (page ${r.page ?? 1}): SQL median ${t.total.median.toFixed(2)} ms, p99 ${t.total.p99.toFixed(2)} ms${t.count ? `, count ${t.count.median.toFixed(2)} ms` : ''}`,
      );
      for (const st of t.statements) {
        console.log(
          `${settingsComment(st)}-- ${st.text.replace(/\s+/g, ' ').trim()}\n-- params: ${JSON.stringify(st.values)}`,
        );
        console.log(await explain(dataSource, st));
      }
    }
  } finally {
    await timer.close();
    await dataSource.destroy();
  }
}

main(process.argv.slice(2)).catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
