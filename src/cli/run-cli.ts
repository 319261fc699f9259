import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CommanderError } from 'commander';
import { ConfigError, loadConfig } from '../config/config';
import { prepareDatabase } from '../database/data-source';
import { CliModule } from './cli.module';
import { CliError } from './cli-run';
import { buildProgram } from './commands';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

/**
 * Runs one admin command: its JSON result on stdout; errors on stderr and a non-zero exit code
 * (1 for a failure, 2 for a usage error).
 */
export async function runCli(args: string[], io: CliIo): Promise<number> {
  let context: INestApplicationContext | undefined;
  const program = buildProgram(async (action) => {
    const config = loadConfig(io.env);
    const result = await action(async () => {
      if (!context) {
        await prepareDatabase(config.databaseUrl);
        context = await NestFactory.createApplicationContext(CliModule.register(config), {
          logger: ['error'],
        });
      }
      return context;
    });
    io.stdout(`${JSON.stringify(result, null, 2)}\n`);
  });
  program.configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  try {
    await program.parseAsync(args, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    const message =
      error instanceof CliError || error instanceof ConfigError
        ? error.message
        : `failed: ${(error as Error).message}`;
    io.stderr(`error: ${message}\n`);
    return 1;
  } finally {
    await context?.close();
  }
}
