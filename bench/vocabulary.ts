/**
 * `npm run bench:vocabulary`: how often each title word and label token occurs in the benched
 * site, to choose the query mix's rare, middle and common words (bench/query-mix.ts). Writes
 * bench/results/vocabulary.json.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seededBenchSite } from './lib/bench-database';

async function main(): Promise<void> {
  const { siteId, dataSource } = await seededBenchSite('bench-vocabulary', 1);
  try {
    const [{ total, labeled }] = await dataSource.query(
      `SELECT count(*)::int AS total, count(*) FILTER (WHERE label_status = 'labeled')::int AS labeled FROM conversations WHERE site_id = $1`,
      [siteId],
    );
    const literal = siteId.replace(/'/g, "''");
    const words: Array<{ word: string; ndoc: number }> = await dataSource.query(
      `SELECT word, ndoc FROM ts_stat('SELECT title_tsv FROM conversations WHERE site_id = ''${literal}''') ORDER BY ndoc DESC, word`,
    );
    const tokens: Array<{ token: string; n: number }> = await dataSource.query(
      'SELECT t AS token, count(*)::int AS n FROM conversations, unnest(label_tokens) t WHERE site_id = $1 GROUP BY t ORDER BY n DESC, t',
      [siteId],
    );
    const columns: Record<string, unknown> = {};
    for (const column of ['channel', 'language', 'label_status']) {
      columns[column] = await dataSource.query(
        `SELECT ${column} AS value, count(*)::int AS n FROM conversations WHERE site_id = $1 GROUP BY 1 ORDER BY 2 DESC`,
        [siteId],
      );
    }
    const out = {
      siteId,
      conversations: total,
      labeled,
      words: words.map((w) => ({ word: w.word, titles: w.ndoc, share: w.ndoc / total })),
      tokens: tokens.map((t) => ({ token: t.token, conversations: t.n, shareOfLabeled: t.n / labeled })),
      columns,
    };
    writeFileSync(join(__dirname, 'results', 'vocabulary.json'), `${JSON.stringify(out, null, 1)}\n`);
    const band = (lo: number, hi: number) =>
      out.words
        .filter((w) => w.share >= lo && w.share < hi)
        .slice(0, 8)
        .map((w) => `${w.word} ${(w.share * 100).toFixed(3)}%`);
    console.log({
      total,
      labeled,
      distinctWords: words.length,
      common: band(0.3, 1.01),
      mid: band(0.005, 0.02),
      rare: band(0.00005, 0.0002),
    });
    console.log(out.tokens.map((t) => `${t.token} ${(t.shareOfLabeled * 100).toFixed(2)}%`).join('\n'));
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
