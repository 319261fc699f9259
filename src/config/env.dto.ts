import { IsIn, IsOptional, IsString, Matches, MinLength } from 'class-validator';
import {
  FlagSetting,
  IntSetting,
  NumberSetting,
  OptionalHttpUrl,
  OptionalSecret,
} from './setting-decorators';

/**
 * Every environment variable the service reads, with its default. Validated once at boot
 * (see config.ts); a bad value stops the start with a message naming every bad variable.
 */
export class EnvDto {
  @IsIn(['development', 'test', 'production'])
  NODE_ENV: string = 'development';

  @IntSetting({ min: 0, max: 65535 })
  PORT: number = 3000;

  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'must be a postgres:// URL' })
  DATABASE_URL: string = 'postgres://postgres@127.0.0.1:5432/shopping_analytics';

  @Matches(/^rediss?:\/\/\S+$/, { message: 'must be a redis:// URL' })
  REDIS_URL: string = 'redis://127.0.0.1:6379';

  /** Prefix of every Redis key this service writes (rate limits, queues); tests use their own. */
  @Matches(/^[A-Za-z0-9_:.-]{1,64}$/, { message: 'must be 1-64 characters of letters, digits, _ : . -' })
  REDIS_KEY_PREFIX: string = 'sa:';

  @Matches(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/, { message: 'must be an absolute http(s) URL' })
  PUBLIC_BASE_URL: string = 'http://localhost:3000';

  @OptionalSecret()
  CURSOR_SECRET?: string;

  /** The secret in use before the last rotation: cursors it signed stay valid. */
  @OptionalSecret()
  CURSOR_SECRET_PREVIOUS?: string;

  /** `none`, a hop count, or a comma-separated list of trusted proxy addresses/CIDRs. */
  @IsString()
  TRUST_PROXY: string = 'none';

  @IntSetting({ min: 1 })
  RATE_LIMIT_IP_MAX: number = 1200;

  @IntSetting({ min: 1 })
  RATE_LIMIT_KEY_MAX: number = 600;

  @IntSetting({ min: 1, max: 86400 })
  RATE_LIMIT_WINDOW_SECONDS: number = 60;

  @IntSetting({ min: 1, max: 86400 })
  RATE_LIMIT_RETRY_AFTER_SECONDS: number = 60;

  @IntSetting({ min: 0 })
  LABEL_QUIET_MINUTES: number = 30;

  @IntSetting({ min: 1 })
  LABEL_SCAN_INTERVAL_SECONDS: number = 60;

  @IsIn(['heuristic', 'http'])
  JUDGE: string = 'heuristic';

  @OptionalHttpUrl()
  JUDGE_URL?: string;

  /**
   * How long a label job stays locked by the worker running it without a heartbeat; a job whose
   * worker died is taken over by another within about twice this time.
   */
  @IntSetting({ min: 1, max: 3600 })
  LABEL_JOB_LOCK_SECONDS: number = 30;

  /** Time allowed for one call to the http judge. */
  @IntSetting({ min: 1, max: 600000 })
  JUDGE_TIMEOUT_MS: number = 30000;

  /** Calls to the http judge per conversation, the first included, before the label fails. */
  @IntSetting({ min: 1, max: 10 })
  JUDGE_ATTEMPTS: number = 3;

  /** Wait before the second call to the http judge; doubled before each later one. */
  @IntSetting({ min: 0, max: 600000 })
  JUDGE_BACKOFF_MS: number = 2000;

  @FlagSetting()
  IMPORT_ALLOW_LOOPBACK: boolean = false;

  /** Page import bounds (product.md "Page import"); defaults are the product's. */
  @IntSetting({ min: 1024 })
  IMPORT_MAX_DOCUMENT_BYTES: number = 50 * 1024 * 1024;

  @IntSetting({ min: 1024 })
  IMPORT_MAX_TOTAL_BYTES: number = 200 * 1024 * 1024;

  @IntSetting({ min: 1 })
  IMPORT_MAX_DOCUMENTS: number = 1000;

  @IntSetting({ min: 1 })
  IMPORT_MAX_URLS: number = 500_000;

  @IntSetting({ min: 1, max: 20 })
  IMPORT_MAX_DEPTH: number = 4;

  @IntSetting({ min: 0, max: 20 })
  IMPORT_MAX_REDIRECTS: number = 5;

  @IntSetting({ min: 10 })
  IMPORT_REQUEST_TIMEOUT_MS: number = 15_000;

  @IntSetting({ min: 100 })
  IMPORT_MAX_DURATION_MS: number = 15 * 60 * 1000;

  /** Imports one worker process runs at once, so one site's huge import does not hold up the others. */
  @IntSetting({ min: 1, max: 64 })
  IMPORT_CONCURRENCY: number = 4;

  /** A running import whose worker has not shown signs of life for this long is resumed or closed. */
  @IntSetting({ min: 1000 })
  IMPORT_LEASE_MS: number = 60_000;

  /** How long starting an import waits for the queue before closing it failed (queue_unavailable). */
  @IntSetting({ min: 50 })
  IMPORT_QUEUE_TIMEOUT_MS: number = 2000;

  @IsIn(['postgres', 'opensearch'])
  SEARCH_BACKEND: string = 'postgres';

  /** One node's URL, or several separated by commas (the client spreads requests and skips dead ones). */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s,]+(,\s*https?:\/\/[^\s,]+)*$/, {
    message: 'must be an absolute http(s) URL, or several separated by commas',
  })
  OPENSEARCH_URL?: string;

  /** Listing searches against OpenSearch give up after this long and fall back to Postgres. */
  @IntSetting({ min: 50, max: 60000 })
  OPENSEARCH_TIMEOUT_MS: number = 2000;

  /**
   * Test-only (refused in production): before each OpenSearch search, drain the searched site's
   * outbox rows and refresh the index, and do not fall back to Postgres, so that a suite run
   * against OpenSearch sees its own writes at once and cannot pass through the fallback.
   */
  @FlagSetting()
  SEARCH_SYNC_FOR_TESTS: boolean = false;

  /** Bulk writes of the mirror (indexer, reindex) give up after this long; the outbox keeps the rows. */
  @IntSetting({ min: 100, max: 600000 })
  OPENSEARCH_BULK_TIMEOUT_MS: number = 30000;

  /** Local directory of export files (used unless EXPORT_S3_BUCKET is set). */
  @IsString()
  @MinLength(1)
  EXPORT_DIR: string = './var/exports';

  /** S3-compatible bucket for export files; credentials come from the AWS default chain. */
  @IsOptional()
  @Matches(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, { message: 'must be a valid S3 bucket name' })
  EXPORT_S3_BUCKET?: string;

  /** Endpoint of an S3-compatible service (MinIO, R2, …); AWS S3 itself when absent. */
  @OptionalHttpUrl()
  EXPORT_S3_ENDPOINT?: string;

  /** Region of the bucket; AWS_REGION when absent, else us-east-1. */
  @IsOptional()
  @IsString()
  EXPORT_S3_REGION?: string;

  /** Hours a completed export's file is kept before it is deleted (state expired). */
  @IntSetting({ min: 1, max: 24 * 365 })
  EXPORT_RETENTION_HOURS: number = 168;

  /** Exports of one organization running at once, across all workers; the rest wait queued. */
  @IntSetting({ min: 1, max: 100 })
  EXPORT_CONCURRENCY_PER_ORG: number = 3;

  /** Exports one worker process runs at once. */
  @IntSetting({ min: 1, max: 64 })
  EXPORT_WORKER_CONCURRENCY: number = 2;

  /** A running export whose worker has been silent this long is taken over (restarted) by another. */
  @IntSetting({ min: 1000 })
  EXPORT_LEASE_MS: number = 30_000;

  /** Rows read from Postgres per round trip while exporting. */
  @IntSetting({ min: 1, max: 50_000 })
  EXPORT_BATCH_ROWS: number = 2000;
  /**
   * Primary shards of a conversations index built by search:reindex (documents are routed by
   * site, so one site's listing reads one shard whatever the count). Read at index creation only.
   */
  @IntSetting({ min: 1, max: 1024 })
  OPENSEARCH_SHARDS: number = 1;

  /**
   * Replicas of each primary shard of an index built by search:reindex (0 on a single node,
   * whose replicas could never be allocated). Read at index creation only.
   */
  @IntSetting({ min: 0, max: 16 })
  OPENSEARCH_REPLICAS: number = 1;

  /**
   * Name of the alias the listing and statistics read; the reindex names its indices
   * `<name>_v<mapping version>[_<time>]` and builds under `<name>_building`. One OpenSearch can
   * hold several deployments (or test runs) under different names.
   */
  @IsOptional()
  @Matches(/^[a-z0-9][a-z0-9_-]{0,99}$/, {
    message: 'must be 1 to 100 lowercase letters, digits, "_" or "-", starting with a letter or digit',
  })
  OPENSEARCH_INDEX: string = 'conversations';

  /**
   * Bearer token that opens /metrics to scrapers anywhere. Unset: /metrics answers only direct
   * loopback connections that no proxy forwarded (see src/auth/metrics-access.guard.ts).
   */
  @OptionalSecret()
  METRICS_TOKEN?: string;

  /**
   * Longest a statement may run. Enforced by PostgreSQL (statement_timeout) and, a second later,
   * by the service itself, which then closes the connection: a statement lost in a network
   * partition ends within this bound too (503), and its transaction can never commit later.
   */
  @IntSetting({ min: 100, max: 600000 })
  DATABASE_STATEMENT_TIMEOUT_MS: number = 5000;

  /** Longest wait for a new connection to PostgreSQL (TCP, TLS and authentication). */
  @IntSetting({ min: 100, max: 60000 })
  DATABASE_CONNECT_TIMEOUT_MS: number = 3000;

  /**
   * PostgreSQL ends a session left idle inside a transaction this long (its client vanished in
   * a partition), releasing its locks. Must exceed the longest pause a transaction of the
   * service makes between statements (the search indexer's bulk write, OPENSEARCH_BULK_TIMEOUT_MS).
   */
  @IntSetting({ min: 1000, max: 3600000 })
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: number = 60000;

  /** Days the change feed keeps an event (GET /api/v1/events); older ones are purged by the workers. */
  @IntSetting({ min: 1, max: 3650 })
  EVENT_RETENTION_DAYS: number = 30;

  /**
   * Key that encrypts webhook signing secrets at rest (AES-256-GCM; the key is derived from it
   * with HKDF-SHA256). Required in production; elsewhere a development-only key is used.
   */
  @OptionalSecret()
  WEBHOOK_SECRET_KEY?: string;

  /**
   * Key of the visitor id hash (HMAC-SHA-256): conversations and orders store only the hash of
   * the `visitorId` they are given (outcomes-v1 §1). Required in production; elsewhere a
   * development-only key is used. Changing it detaches every stored visitor id from new ones.
   */
  @OptionalSecret()
  VISITOR_ID_KEY?: string;

  /** How often the workers re-credit the orders of sites whose attribution window changed (outcomes-v1 §2; 1 for tests). */
  @IntSetting({ min: 1, max: 600 })
  ATTRIBUTION_SWEEP_INTERVAL_SECONDS: number = 600;

  /** Webhook URLs may be plain http:// (refused in production). */
  @FlagSetting()
  WEBHOOK_ALLOW_HTTP: boolean = false;

  /** Test only (refused in production): webhook deliveries may reach loopback addresses on any port. */
  @FlagSetting()
  WEBHOOK_ALLOW_LOOPBACK: boolean = false;

  /** Time allowed for one delivery attempt (connect, send, answer); analytics-v1 §4 says 10 s. */
  @IntSetting({ min: 100, max: 60_000 })
  WEBHOOK_TIMEOUT_MS: number = 10_000;

  /** Test only (refused in production unless 1): multiplies the retry schedule's delays. */
  @NumberSetting({ min: 0.000001, max: 1 })
  WEBHOOK_RETRY_SCALE: number = 1;

  /** A delivery worker's lease on an attempt; a dead worker's attempt is made again after it. */
  @IntSetting({ min: 1000, max: 600_000 })
  WEBHOOK_LEASE_MS: number = 30_000;

  /** Delivery attempts one worker process makes at once, across endpoints. */
  @IntSetting({ min: 1, max: 1000 })
  WEBHOOK_CONCURRENCY: number = 128;

  /** Attempts in flight to one endpoint at once, across every worker: a slow endpoint holds no more. */
  @IntSetting({ min: 1, max: 100 })
  WEBHOOK_CONCURRENCY_PER_ENDPOINT: number = 32;

  /** How often the workers evaluate alerts (workflows-v1 §4: at least once a minute; 1 for tests). */
  @IntSetting({ min: 1, max: 60 })
  ALERT_EVALUATION_INTERVAL_SECONDS: number = 60;

  /** How often the workers delete what is past each site's retentionDays (workflows-v1 §3: at least hourly). */
  @IntSetting({ min: 1, max: 3600 })
  RETENTION_SWEEP_INTERVAL_SECONDS: number = 3600;

  @IsIn(['on', 'off'])
  WORKERS: string = 'on';

  /** HTTP server processes on one port (node:cluster); the background workers run in the first only. */
  @IntSetting({ min: 1, max: 64 })
  HTTP_PROCESSES: number = 1;

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL: string = 'info';
}
