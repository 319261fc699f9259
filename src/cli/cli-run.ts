import type { INestApplicationContext } from '@nestjs/common';

/** A failure the operator caused: printed on stderr, exit code 1. */
export class CliError extends Error {}

/** A command's action: gets the application context when it needs one, returns the JSON result. */
export type CliRun = (app: () => Promise<INestApplicationContext>) => Promise<unknown>;
