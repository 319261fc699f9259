import type { LoggerService } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import pino, { type Level, type Logger } from 'pino';
import { ConfigError } from '../../config/config';

const LEVELS: readonly string[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * The logger of a process's own life (start, listening, fatal errors), before and beside Nest's.
 * Same pino line format as the request logs, so every line a process prints is one JSON object.
 * The level comes from LOG_LEVEL when it is valid: the configuration has not been read yet (and
 * may be the very thing that is broken).
 */
export function createProcessLogger(env: NodeJS.ProcessEnv = process.env): Logger {
  const level = env.LOG_LEVEL && LEVELS.includes(env.LOG_LEVEL) ? env.LOG_LEVEL : 'info';
  // Synchronous writes: a fatal line is out before process.exit, whatever happens next.
  return pino({ level }, pino.destination({ dest: 1, sync: true })).child({ context: 'Bootstrap' });
}

/**
 * Nest's logger while the application is being created, so that a failing module logs JSON too
 * (Nest flushes its buffered start-up logs to this logger when the creation fails). Replaced by
 * ServiceLogger, the same lines bound to the request being served, once the application exists.
 */
export class NestProcessLogger implements LoggerService {
  constructor(protected readonly logger: Logger) {}

  /** The pino logger the next line is written to. */
  protected target(): Logger {
    return this.logger;
  }

  // Nest's levels, each written at pino's of the same name (verbose at trace).
  readonly log = this.at('info');
  readonly error = this.at('error');
  readonly warn = this.at('warn');
  readonly debug = this.at('debug');
  readonly verbose = this.at('trace');
  readonly fatal = this.at('fatal');

  /** A LoggerService method writing at `level`. */
  private at(level: Level): (message: unknown, ...params: unknown[]) => void {
    return (message, ...params) => this.write(level, message, params);
  }

  // Nest passes the context name last, and for errors (message, stack, context).
  private write(level: Level, message: unknown, params: unknown[]): void {
    if (!this.logger.isLevelEnabled(level)) return;
    const logger = this.target();
    const fields: Record<string, unknown> = {};
    const rest = [...params];
    if (rest.length > 0 && typeof rest[rest.length - 1] === 'string') fields.context = rest.pop();
    if (level === 'error' && typeof rest[0] === 'string' && /\n\s*at /.test(rest[0]))
      fields.stack = rest.shift();
    if (message instanceof Error) logger[level]({ ...fields, err: message }, message.message);
    else if (message !== null && typeof message === 'object') logger[level]({ ...fields, ...message });
    else logger[level](fields, String(message));
  }
}

/** Logs why the process cannot go on, as one fatal JSON line, and exits with status 1. */
export function exitOnFatal(logger: Logger, error: unknown): never {
  const [fields, message] = describeFatal(error);
  logger.fatal(fields, message);
  // The process logger writes synchronously (createProcessLogger): the line is out before the exit.
  process.exit(1);
}

function describeFatal(error: unknown): [Record<string, unknown>, string] {
  if (error instanceof ConfigError) {
    return [{ problems: error.problems }, `invalid configuration: ${error.problems.join('; ')}`];
  }
  const { code, syscall, port, address } = error as NodeJS.ErrnoException & {
    port?: number;
    address?: string;
  };
  if (syscall === 'listen' && code === 'EADDRINUSE') {
    return [{ code, address, port }, `cannot listen on port ${port}: it is already in use`];
  }
  if (syscall === 'listen' && code === 'EACCES') {
    return [{ code, address, port }, `cannot listen on port ${port}: permission denied`];
  }
  if (error instanceof Error) return [{ err: error }, `start failed: ${error.message}`];
  return [{ err: String(error) }, 'start failed'];
}

/**
 * An exception nothing caught (or a rejected promise nothing awaited) ends the process as
 * Node would, with status 1, but logged as JSON instead of a plain stack on stderr.
 */
export function logUncaughtErrors(logger: Logger): void {
  process.on('uncaughtException', (err, origin) => {
    logger.fatal(
      { err, origin },
      `${origin === 'unhandledRejection' ? 'unhandled rejection' : 'uncaught exception'}: ${err?.message ?? err}`,
    );
    process.exit(1);
  });
}

/** The start-up facts an operator looks for: what happened to the database, where we listen. */
export function logDatabasePrepared(
  logger: Logger,
  database: { database: string; created: boolean; migrationsApplied: string[] },
): void {
  if (database.created) logger.info({ database: database.database }, `database ${database.database} created`);
  const { migrationsApplied } = database;
  if (migrationsApplied.length > 0) {
    logger.info(
      { database: database.database, count: migrationsApplied.length, migrations: migrationsApplied },
      `migrations applied: ${migrationsApplied.length}`,
    );
  } else {
    logger.info(
      { database: database.database, count: 0, migrations: [] },
      'migrations applied: 0, the schema is up to date',
    );
  }
}

export function logListening(
  logger: Logger,
  address: AddressInfo | string | null,
  publicBaseUrl: string,
): void {
  if (address && typeof address === 'object') {
    logger.info(
      { address: address.address, port: address.port, publicBaseUrl },
      `listening on ${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`,
    );
  } else {
    logger.info({ address, publicBaseUrl }, `listening on ${address}`);
  }
}

/** One line when a supervisor asks the process to stop; Nest's shutdown hooks do the stopping. */
export function logShutdownSignals(logger: Logger): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => logger.info({ signal }, `${signal} received: shutting down`));
  }
}
