import { Command, InvalidArgumentError } from 'commander';
import { DataSource } from 'typeorm';
import { isId } from '../common/ids/ids';
import { CliError, CliRun } from './cli-run';
import { DEFAULT_RANDOM_SEED, SeedService } from '../conversations/seed/seed.service';

function count(value: string): number {
  if (!/^\d{1,8}$/.test(value) || Number(value) < 1 || Number(value) > 20_000_000)
    throw new InvalidArgumentError('must be an integer from 1 to 20000000');
  return Number(value);
}

function days(value: string): number {
  if (!/^\d{1,4}$/.test(value) || Number(value) < 1 || Number(value) > 3650)
    throw new InvalidArgumentError('must be an integer from 1 to 3650');
  return Number(value);
}

function share(value: string): number {
  const n = Number(value);
  if (!/^\d*\.?\d+$/.test(value) || n < 0 || n > 1)
    throw new InvalidArgumentError('must be a number from 0 to 1');
  return n;
}

function seedText(value: string): string {
  if (value.length < 1 || value.length > 200) throw new InvalidArgumentError('must be 1 to 200 characters');
  return value;
}

/**
 * `seed --site ID --conversations N [--days D] [--labeled-share F] [--orders-share F] [--random-seed S]`:
 * synthetic conversations, and orders with `--orders-share`.
 */
export function addSeedCommand(program: Command, run: (action: CliRun) => Promise<void>): void {
  program
    .command('seed')
    .description(
      'Write realistic synthetic conversations (with messages and labels) into a site, for demos and benchmarks',
    )
    .requiredOption('--site <id>', 'site id')
    .requiredOption('--conversations <n>', 'number of conversations', count)
    .option('--days <d>', 'spread creation times over the last D days', days, 90)
    .option('--labeled-share <f>', 'share of labeled conversations (0 to 1)', share, 0.8)
    .option(
      '--orders-share <f>',
      'share of conversations that lead to an order (0 to 1), with visitors and the rest of the store’s orders (docs/outcomes.md)',
      share,
      0,
    )
    .option(
      '--random-seed <text>',
      'seed of the generated texts and draws: the same seed and options write the same titles and transcripts',
      seedText,
      DEFAULT_RANDOM_SEED,
    )
    .action(
      (opts: {
        site: string;
        conversations: number;
        days: number;
        labeledShare: number;
        ordersShare: number;
        randomSeed: string;
      }) =>
        run(async (app) => {
          const ctx = await app();
          const rows = isId('site', opts.site)
            ? await ctx
                .get(DataSource)
                .query(
                  `SELECT organization_id AS "organizationId" FROM sites WHERE id = $1 AND deleted_at IS NULL`,
                  [opts.site],
                )
            : [];
          if (rows.length === 0) throw new CliError(`no site ${opts.site}`);
          return ctx.get(SeedService).seed({
            siteId: opts.site,
            organizationId: rows[0].organizationId,
            conversations: opts.conversations,
            days: opts.days,
            labeledShare: opts.labeledShare,
            ordersShare: opts.ordersShare,
            randomSeed: opts.randomSeed,
            progress: (written) => process.stderr.write(`seeded ${written}/${opts.conversations}\n`),
          });
        }),
    );
}
