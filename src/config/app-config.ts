/** The typed, validated configuration every part of the service reads. Built once by loadConfig. */
export abstract class AppConfig {
  abstract readonly env: 'development' | 'test' | 'production';
  abstract readonly port: number;
  abstract readonly databaseUrl: string;
  abstract readonly database: DatabaseTimeouts;
  abstract readonly redisUrl: string;
  abstract readonly redisKeyPrefix: string;
  abstract readonly publicBaseUrl: string;
  abstract readonly cursorSecrets: readonly string[];
  /** Value for express' `trust proxy` setting. */
  abstract readonly trustProxy: false | number | string[];
  abstract readonly rateLimit: {
    readonly ipMax: number;
    readonly keyMax: number;
    readonly windowSeconds: number;
    readonly retryAfterSeconds: number;
  };
  abstract readonly labeling: {
    readonly quietMinutes: number;
    readonly scanIntervalSeconds: number;
    readonly jobLockSeconds: number;
    readonly judge: 'heuristic' | 'http';
    readonly judgeUrl?: string;
    readonly judgeTimeoutMs: number;
    readonly judgeAttempts: number;
    readonly judgeBackoffMs: number;
  };
  abstract readonly importAllowLoopback: boolean;
  abstract readonly imports: ImportSettings;
  /** Listing engine; `opensearchUrl` set means the mirror is kept (see src/search/). */
  abstract readonly search: {
    readonly backend: 'postgres' | 'opensearch';
    readonly opensearchUrl?: string;
    readonly timeoutMs: number;
    readonly bulkTimeoutMs: number;
    /** Primary shards of an index built by search:reindex (OPENSEARCH_SHARDS). */
    readonly shards: number;
    /** Replicas per primary shard of an index built by search:reindex (OPENSEARCH_REPLICAS). */
    readonly replicas: number;
    /** Alias the listing and statistics read (OPENSEARCH_INDEX); indices are named from it. */
    readonly index: string;
    /** Test-only: searches drain the site's outbox and refresh first, no fallback (env.dto.ts). */
    readonly syncForTests: boolean;
  };
  abstract readonly exports: ExportSettings;
  /** Bearer token of /metrics; unset: loopback only (src/auth/metrics-access.guard.ts). */
  abstract readonly metricsToken?: string;
  /** The change feed (src/events/). */
  abstract readonly events: { readonly retentionDays: number };
  /** Webhook endpoints and their delivery (src/webhooks/). */
  abstract readonly webhooks: WebhookSettings;
  /** Alert evaluation on the workers (src/alerts/). */
  abstract readonly alerts: { readonly evaluationIntervalSeconds: number };
  /** Orders' attribution (src/orders/): the visitor id hash key, the window sweep's interval. */
  abstract readonly attribution: {
    readonly visitorIdKey: string;
    readonly sweepIntervalSeconds: number;
  };
  /** Retention sweeps on the workers (src/deletions/). */
  abstract readonly retention: { readonly sweepIntervalSeconds: number };
  abstract readonly workers: boolean;
  /** HTTP server processes sharing the port (src/common/process/http-processes.ts). */
  abstract readonly httpProcesses: number;
  abstract readonly logLevel: string;
}

/** Bounds and pacing of the sitemap page import (product.md "Page import"). */
export interface ImportSettings {
  /** Decompressed bytes read from one document. */
  readonly maxDocumentBytes: number;
  /** Decompressed bytes read by one import. */
  readonly maxTotalBytes: number;
  readonly maxDocuments: number;
  readonly maxUrls: number;
  /** Sitemap index nesting: the first sitemap is level 1. */
  readonly maxDepth: number;
  readonly maxRedirects: number;
  readonly requestTimeoutMs: number;
  readonly maxDurationMs: number;
  readonly concurrency: number;
  readonly leaseMs: number;
  readonly queueTimeoutMs: number;
}

/** Background exports (analytics-v1 §2). */
export interface ExportSettings {
  /** Local directory of export files, used when no S3 bucket is set. */
  readonly dir: string;
  readonly s3Bucket?: string;
  readonly s3Endpoint?: string;
  readonly s3Region: string;
  readonly retentionHours: number;
  readonly concurrencyPerOrg: number;
  readonly workerConcurrency: number;
  readonly leaseMs: number;
  readonly batchRows: number;
}

/** How long the service waits on PostgreSQL (src/database/pg-timeouts.ts). */
export interface DatabaseTimeouts {
  readonly statementTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly idleInTransactionTimeoutMs: number;
}

/** Webhooks (analytics-v1 §4). */
export interface WebhookSettings {
  /** Encrypts signing secrets at rest (WEBHOOK_SECRET_KEY; a development-only key outside production). */
  readonly secretKey: string;
  readonly allowHttp: boolean;
  readonly allowLoopback: boolean;
  readonly timeoutMs: number;
  readonly retryScale: number;
  readonly leaseMs: number;
  readonly concurrency: number;
  readonly concurrencyPerEndpoint: number;
}
