import type { Command } from 'commander';
import { CliError, CliRun } from './cli-run';
import { AppConfig } from '../config/app-config';
import { REINDEX_CONCURRENCY, ReindexProgress, ReindexService } from '../search/reindex.service';

/** Upper bound of --concurrency: each copy in flight holds a batch and one OpenSearch bulk thread. */
const MAX_CONCURRENCY = 16;

type Run = (action: CliRun) => Promise<void>;

/** A progress bar on stderr (stdout stays the JSON summary); plain lines when not a terminal. */
export function progressPrinter(stream: NodeJS.WriteStream = process.stderr): (p: ReindexProgress) => void {
  let lastDecile = -1;
  return ({ done, total }) => {
    const share = total === 0 ? 1 : Math.min(1, done / total);
    const text = `${done}/${total} conversations (${Math.floor(share * 100)}%)`;
    if (stream.isTTY) {
      const width = 30;
      const filled = Math.round(share * width);
      stream.write(
        `\rreindex [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${text}${done >= total ? '\n' : ''}`,
      );
    } else if (Math.floor(share * 10) > lastDecile) {
      lastDecile = Math.floor(share * 10);
      stream.write(`reindex: ${text}\n`);
    }
  };
}

/** `search:reindex`: builds a new index from Postgres and swaps the alias (README, "Search backends"). */
export function addSearchCommands(program: Command, run: Run): void {
  program
    .command('search:reindex')
    .description(
      'Build a new OpenSearch conversations index from Postgres, then swap the alias to it (no downtime)',
    )
    .option('--delete-previous', 'delete the indices the alias pointed to, once swapped')
    .option(
      '--concurrency <n>',
      `bulk copies in flight at once, 1 to ${MAX_CONCURRENCY} (default ${REINDEX_CONCURRENCY})`,
    )
    .action((opts: { deletePrevious?: boolean; concurrency?: string }) =>
      run(async (app) => {
        const concurrency = opts.concurrency === undefined ? REINDEX_CONCURRENCY : Number(opts.concurrency);
        if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY)
          throw new CliError(`--concurrency must be an integer from 1 to ${MAX_CONCURRENCY}`);
        const ctx = await app();
        if (!ctx.get(AppConfig).search.opensearchUrl) throw new CliError('OPENSEARCH_URL is not set');
        return ctx.get(ReindexService).reindex({
          deletePrevious: Boolean(opts.deletePrevious),
          concurrency,
          onProgress: progressPrinter(),
        });
      }),
    );
}
