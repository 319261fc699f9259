import { plainToInstance } from 'class-transformer';
import { ValidationError, validateSync } from 'class-validator';
import * as ipaddr from 'ipaddr.js';
import { AppConfig } from './app-config';
import { EnvDto } from './env.dto';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const DEV_CURSOR_SECRET = 'development-only-cursor-secret-do-not-use-in-production';
const DEV_WEBHOOK_SECRET_KEY = 'development-only-webhook-secret-key-do-not-use-in-production';
const DEV_VISITOR_ID_KEY = 'development-only-visitor-id-key-do-not-use-in-production';

function parseTrustProxy(raw: string): false | number | string[] | undefined {
  const value = raw.trim();
  if (value === '' || value === 'none' || value === 'false') return false;
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const valid = entries.every((entry) => {
    try {
      if (entry.includes('/')) ipaddr.parseCIDR(entry);
      else ipaddr.parse(entry);
      return true;
    } catch {
      return false;
    }
  });
  return valid && entries.length > 0 ? entries : undefined;
}

/** Variables whose values are never echoed, even in a boot error. */
const SECRETS = new Set([
  'CURSOR_SECRET',
  'CURSOR_SECRET_PREVIOUS',
  'METRICS_TOKEN',
  'WEBHOOK_SECRET_KEY',
  'VISITOR_ID_KEY',
]);

function describe(errors: ValidationError[]): string[] {
  return errors.map(
    (e) =>
      `${e.property}: ${Object.values(e.constraints ?? {}).join('; ')} (got ${
        SECRETS.has(e.property)
          ? 'a value of ' + String(e.value).length + ' characters'
          : JSON.stringify(e.value)
      })`,
  );
}

/**
 * Reads the environment once into a typed AppConfig. Unset or empty variables take their
 * defaults; every bad variable is named in one ConfigError.
 */
export function loadConfig(
  source: NodeJS.ProcessEnv = process.env,
  warn: (msg: string) => void = () => {},
): AppConfig {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(new EnvDto())) {
    const value = source[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  for (const key of [
    'CURSOR_SECRET',
    'CURSOR_SECRET_PREVIOUS',
    'JUDGE_URL',
    'OPENSEARCH_URL',
    'EXPORT_S3_BUCKET',
    'EXPORT_S3_ENDPOINT',
    'EXPORT_S3_REGION',
    'METRICS_TOKEN',
    'WEBHOOK_SECRET_KEY',
    'VISITOR_ID_KEY',
  ]) {
    const value = source[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const env = plainToInstance(EnvDto, raw, { exposeDefaultValues: true });
  const problems = describe(validateSync(env, { whitelist: false }));

  const trustProxy = parseTrustProxy(env.TRUST_PROXY);
  if (trustProxy === undefined) {
    problems.push(
      `TRUST_PROXY: must be none, a hop count, or a comma-separated list of IP addresses/CIDRs (got ${JSON.stringify(env.TRUST_PROXY)})`,
    );
  }
  const production = env.NODE_ENV === 'production';
  if (production && !env.CURSOR_SECRET) problems.push('CURSOR_SECRET: is required when NODE_ENV=production');
  if (production && env.IMPORT_ALLOW_LOOPBACK)
    problems.push('IMPORT_ALLOW_LOOPBACK: must not be true when NODE_ENV=production');
  if (production && !env.WEBHOOK_SECRET_KEY)
    problems.push(
      'WEBHOOK_SECRET_KEY: is required when NODE_ENV=production (it encrypts webhook secrets at rest)',
    );
  if (production && !env.VISITOR_ID_KEY)
    problems.push('VISITOR_ID_KEY: is required when NODE_ENV=production (it keys the visitor id hash)');
  if (production && env.WEBHOOK_ALLOW_HTTP)
    problems.push('WEBHOOK_ALLOW_HTTP: must not be true when NODE_ENV=production');
  if (production && env.WEBHOOK_ALLOW_LOOPBACK)
    problems.push('WEBHOOK_ALLOW_LOOPBACK: must not be true when NODE_ENV=production');
  if (production && env.WEBHOOK_RETRY_SCALE !== 1)
    problems.push('WEBHOOK_RETRY_SCALE: must be 1 when NODE_ENV=production');
  if (env.WEBHOOK_LEASE_MS <= env.WEBHOOK_TIMEOUT_MS)
    problems.push(
      'WEBHOOK_LEASE_MS: must be greater than WEBHOOK_TIMEOUT_MS (a lease outlives the attempt it covers)',
    );
  if (env.JUDGE === 'http' && !env.JUDGE_URL) problems.push('JUDGE_URL: is required when JUDGE=http');
  if (production && env.SEARCH_SYNC_FOR_TESTS)
    problems.push('SEARCH_SYNC_FOR_TESTS: must not be true when NODE_ENV=production');
  if (env.SEARCH_BACKEND === 'opensearch' && !env.OPENSEARCH_URL) {
    problems.push('OPENSEARCH_URL: is required when SEARCH_BACKEND=opensearch');
  }
  if (env.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS <= env.OPENSEARCH_BULK_TIMEOUT_MS) {
    problems.push(
      'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: must be greater than OPENSEARCH_BULK_TIMEOUT_MS (the search indexer writes to OpenSearch inside a transaction)',
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);

  if (!env.CURSOR_SECRET && env.NODE_ENV === 'development') {
    warn('CURSOR_SECRET is not set: using a development-only secret. Set it before exposing the service.');
  }
  if (!env.WEBHOOK_SECRET_KEY && env.NODE_ENV === 'development') {
    warn('WEBHOOK_SECRET_KEY is not set: webhook secrets are encrypted with a development-only key.');
  }
  if (!env.VISITOR_ID_KEY && env.NODE_ENV === 'development') {
    warn('VISITOR_ID_KEY is not set: visitor ids are hashed with a development-only key.');
  }
  const cursorSecrets = [env.CURSOR_SECRET ?? DEV_CURSOR_SECRET, env.CURSOR_SECRET_PREVIOUS].filter(
    (s): s is string => Boolean(s),
  );

  return Object.freeze({
    env: env.NODE_ENV as AppConfig['env'],
    port: env.PORT,
    databaseUrl: env.DATABASE_URL,
    database: Object.freeze({
      statementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
      connectTimeoutMs: env.DATABASE_CONNECT_TIMEOUT_MS,
      idleInTransactionTimeoutMs: env.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    }),
    redisUrl: env.REDIS_URL,
    redisKeyPrefix: env.REDIS_KEY_PREFIX,
    publicBaseUrl: env.PUBLIC_BASE_URL.replace(/\/+$/, ''),
    cursorSecrets,
    trustProxy: trustProxy as AppConfig['trustProxy'],
    rateLimit: Object.freeze({
      ipMax: env.RATE_LIMIT_IP_MAX,
      keyMax: env.RATE_LIMIT_KEY_MAX,
      windowSeconds: env.RATE_LIMIT_WINDOW_SECONDS,
      retryAfterSeconds: env.RATE_LIMIT_RETRY_AFTER_SECONDS,
    }),
    labeling: Object.freeze({
      quietMinutes: env.LABEL_QUIET_MINUTES,
      scanIntervalSeconds: env.LABEL_SCAN_INTERVAL_SECONDS,
      jobLockSeconds: env.LABEL_JOB_LOCK_SECONDS,
      judge: env.JUDGE as 'heuristic' | 'http',
      judgeUrl: env.JUDGE_URL,
      judgeTimeoutMs: env.JUDGE_TIMEOUT_MS,
      judgeAttempts: env.JUDGE_ATTEMPTS,
      judgeBackoffMs: env.JUDGE_BACKOFF_MS,
    }),
    importAllowLoopback: env.IMPORT_ALLOW_LOOPBACK,
    imports: Object.freeze({
      maxDocumentBytes: env.IMPORT_MAX_DOCUMENT_BYTES,
      maxTotalBytes: env.IMPORT_MAX_TOTAL_BYTES,
      maxDocuments: env.IMPORT_MAX_DOCUMENTS,
      maxUrls: env.IMPORT_MAX_URLS,
      maxDepth: env.IMPORT_MAX_DEPTH,
      maxRedirects: env.IMPORT_MAX_REDIRECTS,
      requestTimeoutMs: env.IMPORT_REQUEST_TIMEOUT_MS,
      maxDurationMs: env.IMPORT_MAX_DURATION_MS,
      concurrency: env.IMPORT_CONCURRENCY,
      leaseMs: env.IMPORT_LEASE_MS,
      queueTimeoutMs: env.IMPORT_QUEUE_TIMEOUT_MS,
    }),
    search: Object.freeze({
      backend: env.SEARCH_BACKEND as 'postgres' | 'opensearch',
      opensearchUrl: env.OPENSEARCH_URL?.split(',')
        .map((url) => url.trim().replace(/\/+$/, ''))
        .join(','),
      timeoutMs: env.OPENSEARCH_TIMEOUT_MS,
      bulkTimeoutMs: env.OPENSEARCH_BULK_TIMEOUT_MS,
      shards: env.OPENSEARCH_SHARDS,
      replicas: env.OPENSEARCH_REPLICAS,
      index: env.OPENSEARCH_INDEX,
      syncForTests: env.SEARCH_SYNC_FOR_TESTS,
    }),
    exports: Object.freeze({
      dir: env.EXPORT_DIR,
      s3Bucket: env.EXPORT_S3_BUCKET,
      s3Endpoint: env.EXPORT_S3_ENDPOINT?.replace(/\/+$/, ''),
      s3Region: env.EXPORT_S3_REGION ?? (source.AWS_REGION || 'us-east-1'),
      retentionHours: env.EXPORT_RETENTION_HOURS,
      concurrencyPerOrg: env.EXPORT_CONCURRENCY_PER_ORG,
      workerConcurrency: env.EXPORT_WORKER_CONCURRENCY,
      leaseMs: env.EXPORT_LEASE_MS,
      batchRows: env.EXPORT_BATCH_ROWS,
    }),
    metricsToken: env.METRICS_TOKEN,
    events: Object.freeze({ retentionDays: env.EVENT_RETENTION_DAYS }),
    webhooks: Object.freeze({
      secretKey: env.WEBHOOK_SECRET_KEY ?? DEV_WEBHOOK_SECRET_KEY,
      allowHttp: env.WEBHOOK_ALLOW_HTTP,
      allowLoopback: env.WEBHOOK_ALLOW_LOOPBACK,
      timeoutMs: env.WEBHOOK_TIMEOUT_MS,
      retryScale: env.WEBHOOK_RETRY_SCALE,
      leaseMs: env.WEBHOOK_LEASE_MS,
      concurrency: env.WEBHOOK_CONCURRENCY,
      concurrencyPerEndpoint: env.WEBHOOK_CONCURRENCY_PER_ENDPOINT,
    }),
    alerts: Object.freeze({ evaluationIntervalSeconds: env.ALERT_EVALUATION_INTERVAL_SECONDS }),
    attribution: Object.freeze({
      visitorIdKey: env.VISITOR_ID_KEY ?? DEV_VISITOR_ID_KEY,
      sweepIntervalSeconds: env.ATTRIBUTION_SWEEP_INTERVAL_SECONDS,
    }),
    retention: Object.freeze({ sweepIntervalSeconds: env.RETENTION_SWEEP_INTERVAL_SECONDS }),
    workers: env.WORKERS === 'on',
    httpProcesses: env.HTTP_PROCESSES,
    logLevel: env.LOG_LEVEL,
  });
}
