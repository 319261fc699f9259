import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresConnectionOptions } from 'typeorm/driver/postgres/PostgresConnectionOptions';
import { TEXT_PARSERS } from '../../database/records/conversation-text';
import { sidePool } from '../../database/side-pool';

/**
 * The plan shape a listing statement needs. Every listing statement reads a bounded amount of
 * data: parallel workers and JIT compilation (which the planner's guesses on bitmask and
 * tsvector conditions would trigger) only add latency, so no shape has them. `bitmap` pins the
 * GIN index (no index or sequential scans), `walk` the creation-time btree (no bitmaps).
 */
export type PlanShape = 'plain' | 'bitmap' | 'walk';

/** The session settings of each shape, sent once per connection in its startup packet. */
// TimeZone=UTC: timestamps read as text come as `2026-11-01 12:34:56.789+00`, which
// conversation-text.ts turns into ISO strings without parsing dates (any zone is right, only slower).
export const SHAPE_SETTINGS: Record<PlanShape, readonly string[]> = {
  plain: ['jit=off', 'max_parallel_workers_per_gather=0', 'TimeZone=UTC'],
  // work_mem: a GIN bitmap of ~100,000 candidates (a common title word) went lossy at the 4 MB
  // default, and every row of a lossy page was rechecked (45,000 more rows for `retour`).
  bitmap: [
    'jit=off',
    'max_parallel_workers_per_gather=0',
    'enable_indexscan=off',
    'enable_seqscan=off',
    'work_mem=16MB',
    'TimeZone=UTC',
  ],
  walk: [
    'jit=off',
    'max_parallel_workers_per_gather=0',
    'enable_bitmapscan=off',
    'enable_seqscan=off',
    'TimeZone=UTC',
  ],
};

/** The startup `options` of a shape's sessions: its settings, each as `-c name=value`. */
export const shapeStartupOptions = (shape: PlanShape): string =>
  SHAPE_SETTINGS[shape].map((s) => `-c ${s}`).join(' ');

/** A shape's setting as a `SET LOCAL` statement (to reproduce it in a transaction: EXPLAIN). */
export function setLocal(setting: string): string {
  const [name, value] = setting.split('=');
  return `SET LOCAL ${name} = '${value}'`;
}

/**
 * How a statement's values are read: `parsed` by pg's type parsers (numbers, dates, JSON), or
 * `text`, every value as PostgreSQL's text (the rows of a page: conversation-text.ts writes
 * their list items from it).
 */
export type ValueReading = 'parsed' | 'text';

/** Runs one listing statement with the session settings of a plan shape. */
export interface ListingQueries {
  query<T>(shape: PlanShape, text: string, values: unknown[], reading?: ValueReading): Promise<T[]>;
}

/**
 * Where the listing engine's filtered statements run (ListingQueries): the listing pools in the
 * application; a script built without it (PostgresConversationSearch.standalone) may pass its own,
 * which records or explains each statement before running it on the pools.
 */
export const LISTING_QUERIES = Symbol('ListingQueries');

/** Connections of the `bitmap` and `walk` pools, as a share of the `plain` one (those plans are rarer). */
const PINNED_POOL_SHARE = 0.5;

/**
 * How long a listing connection idles before it is closed: 10 minutes (HikariCP's default
 * idleTimeout), not the side pools' 30 s. A new backend costs its start and, worse, its first
 * statements: its catalog caches are empty, so a keyword page planned in 2.5 ms instead of
 * 0.1 ms and ran in 6.2 instead of 2.2 (EXPLAIN, first and third statement of one session).
 * With 30 s, every burst after a quiet half-minute paid that on up to 20 connections per
 * process: the mix at 32 connections after 40 s idle had p99 298 ms against 162 ms warm
 * (docs/request-cost.md, session 26). Idle connections hold no more than the pool's peak.
 */
export const LISTING_IDLE_MS = 10 * 60_000;

/**
 * One pg pool per plan shape, whose connections carry the shape's settings from their start
 * (`options=-c jit=off …` in the startup packet), so a listing statement is one round trip:
 * no `BEGIN`, `SET LOCAL …`, `COMMIT` around it. Same server, credentials and timeouts as the
 * DataSource it is built from (statement_timeout, the client-side query deadline); connections
 * are opened on first use and closed after LISTING_IDLE_MS idle.
 */
@Injectable()
export class ListingPools implements ListingQueries, OnApplicationShutdown {
  private readonly pools: Record<PlanShape, Pool>;

  constructor(dataSource: DataSource) {
    const size = (dataSource.options as PostgresConnectionOptions).poolSize ?? 10;
    const make = (shape: PlanShape, max: number): Pool =>
      sidePool(dataSource, {
        suffix: `listing-${shape}`,
        max,
        startupOptions: shapeStartupOptions(shape),
        idleTimeoutMillis: LISTING_IDLE_MS,
      });
    const pinned = Math.max(1, Math.ceil(size * PINNED_POOL_SHARE));
    this.pools = { plain: make('plain', size), bitmap: make('bitmap', pinned), walk: make('walk', pinned) };
  }

  async query<T>(
    shape: PlanShape,
    text: string,
    values: unknown[],
    reading: ValueReading = 'parsed',
  ): Promise<T[]> {
    const config = reading === 'text' ? { text, values, types: TEXT_PARSERS } : { text, values };
    return (await this.pools[shape].query(config)).rows as T[];
  }

  /** Every pool (tests observe their connections). */
  all(): Pool[] {
    return Object.values(this.pools);
  }

  async end(): Promise<void> {
    await Promise.all(this.all().map((pool) => (pool.ending ? undefined : pool.end())));
  }

  onApplicationShutdown(): Promise<void> {
    return this.end();
  }
}
