import { Command, InvalidArgumentError } from 'commander';
import { ApiKeysService } from '../auth/api-keys.service';
import { isId } from '../common/ids/ids';
import { OrganizationsService } from '../organizations/organizations.service';
import { normalizeOrigin } from '../sites/site-address';
import { CliError, CliRun } from './cli-run';
import { addSearchCommands } from './search.commands';
import { addSeedCommand } from './seed.command';

function text(max: number) {
  return (value: string) => {
    const v = value.trim();
    if (v.length === 0 || v.length > max) throw new InvalidArgumentError(`must be 1 to ${max} characters`);
    return v;
  };
}

function isoDate(value: string): Date {
  const date = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(date.getTime()))
    throw new InvalidArgumentError('must be an ISO 8601 timestamp');
  return date;
}

function origin(value: string): string {
  const normalized = normalizeOrigin(value);
  if (!normalized)
    throw new InvalidArgumentError('must be an absolute http(s) origin such as https://shop.example');
  return normalized;
}

/**
 * The admin commands. Each resolves to the JSON document printed on stdout. The commands call
 * the features' services; no feature imports the CLI.
 */
export function buildProgram(run: (action: CliRun) => Promise<void>): Command {
  const program = new Command('cli')
    .description('Administration of the shopping-assistant analytics service')
    .exitOverride();

  program
    .command('org:create')
    .description('Create an organization with its first site and API key')
    .requiredOption('--name <name>', 'organization name', text(200))
    .requiredOption('--site-name <name>', 'first site name', text(200))
    .requiredOption('--origin <url>', 'first site origin, e.g. https://shop.example', origin)
    .action((opts: { name: string; siteName: string; origin: string }) =>
      run(async (app) =>
        (await app())
          .get(OrganizationsService)
          .create({ name: opts.name, siteName: opts.siteName, origin: opts.origin }),
      ),
    );

  program
    .command('key:create')
    .description('Create an API key for an organization (the secret is shown once)')
    .requiredOption('--org <id>', 'organization id')
    .option('--name <name>', 'key name', text(200))
    .option('--expires-at <iso>', 'expiry time', isoDate)
    .action((opts: { org: string; name?: string; expiresAt?: Date }) =>
      run(async (app) => {
        const ctx = await app();
        if (!isId('org', opts.org) || !(await ctx.get(OrganizationsService).exists(opts.org))) {
          throw new CliError(`no organization ${opts.org}`);
        }
        if (opts.expiresAt && opts.expiresAt.getTime() <= Date.now())
          throw new CliError('--expires-at must be in the future');
        const { key, secret } = await ctx
          .get(ApiKeysService)
          .create({ organizationId: opts.org, name: opts.name, expiresAt: opts.expiresAt });
        return { id: key.id, secret };
      }),
    );

  program
    .command('key:revoke')
    .description('Revoke an API key')
    .requiredOption('--id <id>', 'key id')
    .action((opts: { id: string }) =>
      run(async (app) => {
        const key = isId('key', opts.id)
          ? await (await app()).get(ApiKeysService).revoke(opts.id)
          : undefined;
        if (!key) throw new CliError(`no API key ${opts.id}`);
        return { id: key.id, revokedAt: key.revokedAt?.toISOString() ?? null };
      }),
    );

  addSeedCommand(program, run);
  addSearchCommands(program, run);
  return program;
}
