/**
 * Prints EXPLAIN (ANALYZE, BUFFERS) of every statement the Postgres query engine runs for the
 * hard cases of bench/listing-latency.ts (page, then count):
 * `DATABASE_URL=… npx ts-node -T bench/explain-listing.ts --site site_… [--case "rare token"]`.
 */
import { DataSource, EntityManager } from 'typeorm';
import { createDataSource } from '../src/database/data-source';
import { parseListingQuery } from '../src/conversations/dto/listing-query';
import { PostgresConversationSearch } from '../src/search/postgres/postgres-conversation-search';
import { PlanShape, setLocal, SHAPE_SETTINGS, ValueReading } from '../src/search/postgres/listing-pools';
import { CASES } from './listing-latency-cases';

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .reduce<string[][]>(
      (acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc),
      [],
    ),
);

async function explain(
  run: (sql: string, values?: unknown[]) => Promise<Array<{ 'QUERY PLAN': string }>>,
  sql: string,
  values?: unknown[],
) {
  if (!sql.trim().startsWith('SELECT')) return;
  const plan: Array<{ 'QUERY PLAN': string }> = await run(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, values);
  console.log(
    `\n\`\`\`\n${sql.replace(/\s+/g, ' ').trim()}\n-- ${JSON.stringify(values)}\n${plan.map((p) => p['QUERY PLAN']).join('\n')}\n\`\`\``,
  );
}

async function main() {
  const ds = await createDataSource(process.env.DATABASE_URL!, { poolSize: 2 }).initialize();
  const traced = new Proxy(ds, {
    get(target, prop) {
      if (prop === 'query')
        return async (sql: string, values?: unknown[]) => (
          await explain(target.query.bind(target), sql, values),
          target.query(sql, values)
        );
      return Reflect.get(target, prop);
    },
  }) as DataSource;
  // The listing statements: explained under their plan shape's settings, then run as the engine runs them.
  const search = PostgresConversationSearch.standalone(traced, {
    queries: (pools) => ({
      query: async <T>(
        shape: PlanShape,
        sql: string,
        values: unknown[],
        reading?: ValueReading,
      ): Promise<T[]> => {
        await ds.transaction(async (manager: EntityManager) => {
          for (const setting of SHAPE_SETTINGS[shape]) await manager.query(setLocal(setting));
          await explain(manager.query.bind(manager), sql, values);
        });
        return pools.query<T>(shape, sql, values, reading);
      },
    }),
  });
  const cases = await CASES(ds, args.site);
  for (const [name, query] of Object.entries(cases)) {
    if (args.case && !name.includes(args.case)) continue;
    const { filter } = parseListingQuery(query);
    console.log(`\n### ${name}: page\n`);
    await search.page(args.site, filter, { limit: 25 });
    console.log(`\n### ${name}: count\n`);
    await search.count(args.site, filter, 10_000);
  }
  await search.close();
  await ds.destroy();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
