import { AsyncLocalStorage } from 'node:async_hooks';
import type { NextFunction, Request, Response } from 'express';
import pino, { type Logger } from 'pino';
import type { ServiceRequest } from '../http/request-context';
import { redactSearchWords, redactSearchWordsInUrl } from '../privacy/search-words';
import { NestProcessLogger } from './process-logger';

/** Request headers no log line may show: API keys, the metrics token, session cookies. */
export const REDACTED_HEADERS = ['req.headers.authorization', 'req.headers.cookie'];

/**
 * `req` as pino's standard serializer writes it, with the search words (`q`, `keywords`) of its
 * URL and query replaced by `[redacted]`: they are a shopper's words (search-words.ts). Every
 * line that carries the request (the access line, and each line bound to it by loggerFor) is
 * written through it.
 */
function serializeRequest(req: Parameters<typeof pino.stdSerializers.req>[0]) {
  const line = pino.stdSerializers.req(req);
  if (typeof line.url === 'string') line.url = redactSearchWordsInUrl(line.url);
  if (Object.hasOwn(line, 'query')) line.query = redactSearchWords(line.query);
  return line;
}

/**
 * The service's logger: JSON lines on stdout, `req` and `res` written as pino's standard
 * serializers write them (the request's search words redacted: serializeRequest), the
 * credentials in REDACTED_HEADERS replaced by `[Redacted]`.
 */
export function createServiceLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    serializers: { req: serializeRequest, res: pino.stdSerializers.res, err: pino.stdSerializers.err },
    redact: REDACTED_HEADERS,
  };
  return destination ? pino(options, destination) : pino(options);
}

/** The request being served, for the lines written while serving it (ServiceLogger). */
const serving = new AsyncLocalStorage<ServiceRequest>();
const requestLogger = Symbol('requestLogger');

type LoggedRequest = ServiceRequest & { [requestLogger]?: Logger };

/**
 * The logger for a line written now: inside a request, `root` bound to that request (`req` and
 * `requestId`, made once per request and only when the request writes a line); else `root`.
 */
export function loggerFor(root: Logger): Logger {
  const req = serving.getStore() as LoggedRequest | undefined;
  if (!req) return root;
  return (req[requestLogger] ??= root.child({ req, requestId: req.id }));
}

/**
 * The access log, and the request bound to what serves it. One `info` line per request once its
 * answer is sent or the connection closes: the request (id, method, URL, query, params, headers
 * redacted, client address), `requestId`, the response (status, headers), `responseTime` in ms,
 * and `request completed`, or `request errored` with `err` for a 5xx or a stream error. The line
 * is built only then: nothing is serialised for a request while it is being served, unlike
 * pino-http's per-request child logger (docs/request-cost.md). `ignore`d requests get no line.
 * Mount it right after the request id, so every request the service reads is logged. What runs
 * after it stays bound to the request through promises and through callbacks bound with
 * AsyncResource; a plain listener on the request's stream would not be (the body parser's
 * raw-body binds its callback: request-logging.spec.ts reads a body in pieces through it).
 */
export function accessLogMiddleware(root: Logger, ignore: (req: Request) => boolean) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!ignore(req)) {
      const started = Date.now();
      const done = (err?: Error) => {
        res.off('finish', done);
        res.off('close', done);
        res.off('error', done);
        writeAccessLine(root, req as ServiceRequest, res, Date.now() - started, err);
      };
      res.on('finish', done);
      res.on('close', done);
      res.on('error', done);
    }
    serving.run(req as ServiceRequest, next);
  };
}

function writeAccessLine(
  root: Logger,
  req: ServiceRequest,
  res: Response,
  responseTime: number,
  streamError: Error | undefined,
): void {
  if (!root.isLevelEnabled('info')) return;
  if (streamError || res.statusCode >= 500) {
    const err = streamError ?? new Error(`failed with status code ${res.statusCode}`);
    root.info({ req, requestId: req.id, res, err, responseTime }, 'request errored');
  } else {
    root.info({ req, requestId: req.id, res, responseTime }, 'request completed');
  }
}

/**
 * Nest's logger for the service's processes (app.useLogger): NestProcessLogger's lines, each
 * written by the service logger bound to the request being served when there is one (loggerFor),
 * so every line written while serving a request carries its `req` and `requestId`.
 */
export class ServiceLogger extends NestProcessLogger {
  /** The logger outside any request (the access log writes through it). */
  get root(): Logger {
    return this.logger;
  }

  protected override target(): Logger {
    return loggerFor(this.logger);
  }
}
