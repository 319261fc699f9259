import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CommanderError } from 'commander';
import { ConfigError, loadConfig } from '../config/config';
import { prepareDatabase } from '../database/data-source';
import { CliModule } from './cli.module';
import { addSeedCommand } from '../conversations/seed/seed.command';
import { buildProgram, CliError } from './commands';

/** `npm run cli -- <command>`: JSON on stdout; errors on stderr with a non-zero exit. */
async function main(argv: string[]): Promise<number> {
  let context: INestApplicationContext | undefined;
  const program = buildProgram(async (action) => {
    const config = loadConfig(process.env);
    const result = await action(async () => {
      if (!context) {
        await prepareDatabase(config.databaseUrl);
        context = await NestFactory.createApplicationContext(CliModule.register(config), { logger: ['error'] });
      }
      return context;
    });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  }, [addSeedCommand]);
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    const message = error instanceof CliError || error instanceof ConfigError ? error.message : `failed: ${(error as Error).message}`;
    process.stderr.write(`error: ${message}\n`);
    return 1;
  } finally {
    await context?.close();
  }
}

main(process.argv).then((code) => process.exit(code));
