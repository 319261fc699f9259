import type { Command } from 'commander';
import { CliError, CliRun } from './cli-run';
import { AppConfig } from '../config/app-config';
import { ReindexProgress, ReindexService } from '../search/reindex.service';

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
    .action((opts: { deletePrevious?: boolean }) =>
      run(async (app) => {
        const ctx = await app();
        if (!ctx.get(AppConfig).search.opensearchUrl) throw new CliError('OPENSEARCH_URL is not set');
        return ctx
          .get(ReindexService)
          .reindex({ deletePrevious: Boolean(opts.deletePrevious), onProgress: progressPrinter() });
      }),
    );
}
