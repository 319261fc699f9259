import { Injectable } from '@nestjs/common';
import type { Socket } from 'node:net';
import type { PoolClient } from 'pg';
import { DataSource, QueryRunner } from 'typeorm';
import { RAW_TEXT, RawRow } from '../database/records/conversation-text';
import { MESSAGE_COLUMNS, MessageRecord } from '../database/records/conversation.records';
import type { Statement } from '../database/sql-statement';
import { fetchEachRow } from './streamed-fetch';

/**
 * statement_timeout of the export's transaction: one FETCH of a sparse filter may scan far more
 * rows than a listing page does.
 */
const FETCH_TIMEOUT_MS = 60_000;

/**
 * One export's read, on a connection of its own: one REPEATABLE READ, read-only transaction (one
 * snapshot) and a server-side cursor over the export's rows, fetched in batches.
 */
export class ExportRead {
  private client?: PoolClient;

  constructor(private readonly runner: QueryRunner) {}

  /** Connects and begins the transaction; answers the instant the export sees (its snapshot). */
  async begin(): Promise<Date> {
    this.client = (await this.runner.connect()) as PoolClient;
    await this.runner.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    // A long read of many rows: parallel workers and JIT only add start-up cost here. Timestamps
    // as UTC text, the shape export-rows turns into ISO strings without parsing dates.
    await this.runner.query(
      `SET LOCAL jit = off; SET LOCAL max_parallel_workers_per_gather = 0; SET LOCAL TimeZone = 'UTC'`,
    );
    // One FETCH of a sparse filter may scan far more rows than a listing page does: it gets a
    // minute (DATABASE_STATEMENT_TIMEOUT_MS bounds the API's statements). A statement of its own,
    // so the client-side deadline (src/database/pg-timeouts.ts) follows it.
    await this.runner.query(`SET LOCAL statement_timeout = ${FETCH_TIMEOUT_MS}`);
    // The snapshot is taken by this first query: asOf is the instant the export sees.
    const [{ as_of }] = await this.runner.query('SELECT statement_timestamp() AS as_of');
    return as_of as Date;
  }

  /** Declares the cursor over the export's rows (export-rows.ts, exportRowsSql). */
  async declare(statement: Statement): Promise<void> {
    await this.runner.query(`DECLARE export_rows NO SCROLL CURSOR FOR ${statement.text}`, statement.values);
  }

  /** The connection's socket: paused while the storage is behind (ChunkWriter). */
  get socket(): Socket {
    return (this.client as unknown as { connection: { stream: Socket } }).connection.stream;
  }

  /** The next `rows` rows, kept (a batch whose transcripts are read before it is written). */
  async fetchBatch(rows: number): Promise<RawRow[]> {
    return (await this.client!.query<RawRow>({ text: `FETCH ${rows} FROM export_rows`, ...RAW_TEXT })).rows;
  }

  /** The next `rows` rows, each handed to `onRow` as it arrives (fetchEachRow); answers their number. */
  fetchEach(rows: number, onRow: (row: RawRow) => void): Promise<number> {
    return fetchEachRow(this.client!, `FETCH ${rows} FROM export_rows`, onRow, FETCH_TIMEOUT_MS);
  }

  /** The messages of a batch's conversations, by conversation and in transcript order. */
  messagesOf(conversationIds: string[]): Promise<MessageRecord[]> {
    return this.runner.query(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ANY($1::text[]) ORDER BY conversation_id, created_at, position`,
      [conversationIds],
    );
  }

  async commit(): Promise<void> {
    await this.runner.query('COMMIT');
  }

  async rollback(): Promise<void> {
    await this.runner.query('ROLLBACK');
  }

  async release(): Promise<void> {
    await this.runner.release();
  }
}

/** The SQL of an export's read (ExportRead). */
@Injectable()
export class ExportReadRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** A read on a connection of its own, not yet begun. */
  read(): ExportRead {
    return new ExportRead(this.dataSource.createQueryRunner());
  }
}
