/**
 * `npm run bench:explain-stats -- NAME...`: EXPLAIN (ANALYZE, BUFFERS) of every statement the
 * Postgres stats engine runs for the named requests of the stats mix (bench/stats-bench.ts),
 * captured from the engine itself, in a transaction with the engine's own settings.
 */
import { DataSource, EntityManager } from 'typeorm';
import { PostgresConversationStats } from '../src/search/stats/postgres/postgres-conversation-stats';
import { statsPlan } from '../src/search/stats/postgres/stats-planner';
import { parseStatsRequest as parseStatsQuery } from '../src/stats/dto/stats-request';
import { seededBenchSite } from './lib/bench-database';
import { mixContext } from './lib/mix-context';
import { buildStatsMix } from './stats-bench';

interface Captured {
  text: string;
  values: unknown[];
}

/** A DataSource stand-in whose transactions record every statement the engine sends. */
function capturing(dataSource: DataSource, into: Captured[]): DataSource {
  return {
    transaction: (isolation: string, work: (m: EntityManager) => Promise<unknown>) =>
      dataSource.transaction(isolation as 'REPEATABLE READ', (m) =>
        work({
          query: (text: string, values?: unknown[]) => {
            into.push({ text, values: values ?? [] });
            return m.query(text, values);
          },
        } as EntityManager),
      ),
  } as unknown as DataSource;
}

async function main(names: string[]): Promise<void> {
  const { siteId, dataSource } = await seededBenchSite('bench-explain-stats', 2);
  try {
    const mix = buildStatsMix(await mixContext(dataSource, siteId)).filter(
      (r) => names.length === 0 || names.includes(r.name),
    );
    for (const r of mix) {
      const captured: Captured[] = [];
      const engine = PostgresConversationStats.standalone(capturing(dataSource, captured));
      const query = parseStatsQuery(r.query as Record<string, unknown>, new Date());
      const started = process.hrtime.bigint();
      const answer = await engine.stats(siteId, query);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      console.log(
        `\n=== ${r.name} (${statsPlan(query.filter)}): total ${answer.total}, engine ${ms.toFixed(1)} ms`,
      );
      // The engine's SET statements and its first query (set_config(…, true) and the snapshot).
      const settings = captured.filter((c) => /^\s*SET\b/i.test(c.text) || /set_config\(/.test(c.text));
      for (const st of captured) {
        if (settings.includes(st)) continue;
        const plan = await dataSource.transaction('REPEATABLE READ', async (m) => {
          for (const s of settings) if (!/READ ONLY/i.test(s.text)) await m.query(s.text);
          return (await m.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${st.text}`, st.values)) as Array<{
            'QUERY PLAN': string;
          }>;
        });
        console.log(`-- ${st.text.replace(/\s+/g, ' ').trim()}\n-- params: ${JSON.stringify(st.values)}`);
        console.log(plan.map((p) => p['QUERY PLAN']).join('\n'));
      }
    }
  } finally {
    await dataSource.destroy();
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
