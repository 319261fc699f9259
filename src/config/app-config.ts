/** The typed, validated configuration every part of the service reads. Built once by loadConfig. */
export abstract class AppConfig {
  abstract readonly env: 'development' | 'test' | 'production';
  abstract readonly port: number;
  abstract readonly databaseUrl: string;
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
    readonly judge: 'heuristic' | 'http';
    readonly judgeUrl?: string;
  };
  abstract readonly importAllowLoopback: boolean;
  /** Listing engine; `opensearchUrl` set means the mirror is kept (see src/search/). */
  abstract readonly search: {
    readonly backend: 'postgres' | 'opensearch';
    readonly opensearchUrl?: string;
    readonly timeoutMs: number;
    readonly bulkTimeoutMs: number;
    /** Test-only: searches drain the site's outbox and refresh first, no fallback (env.dto.ts). */
    readonly syncForTests: boolean;
  };
  abstract readonly workers: boolean;
  abstract readonly logLevel: string;
}
