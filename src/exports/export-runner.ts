import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { presentMessage } from '../conversations/conversation.presenter';
import type { MessageRecord } from '../database/records/conversation.records';
import { parseExportFilters } from './dto/export-request';
import { ByteChunks } from './byte-chunks';
import { ChunkWriter } from './chunk-writer';
import type { RawRow } from '../database/records/conversation-text';
import { ExportRead, ExportReadRepository } from './export-read.repository';
import { CSV_HEADER, csvCells, csvRecord, exportRowsSql, ndjsonLine } from './export-rows';
import { EXPORT_OUTCOME_LISTENER, ExportOutcomeListener } from './export-outcome';
import { ExportRecord, storageKeyOf } from './export.records';
import { ExportsRepository } from './exports.repository';
import { EXPORT_STORAGE, ExportStorage } from './storage/export-storage';

/** The export stopped because it is no longer this worker's: deleted (cancelled) or taken over. */
export class ExportLost extends Error {
  constructor(id: string) {
    super(`export ${id} was cancelled or taken over`);
  }
}

/**
 * An export without messages reads this many batches (EXPORT_BATCH_ROWS) per FETCH: its rows are
 * written out as they arrive, never held, so only the round trips change.
 */
const STREAMED_BATCHES = 5;

export type RunOutcome = 'completed' | 'lost';

/**
 * Writes one export's file: the conversations matching its filters at one instant (`asOf`),
 * newest first, read in batches through a server-side cursor of one REPEATABLE READ transaction
 * (one snapshot, nothing held in memory beyond a batch), serialized, hashed and streamed into
 * the storage under a temporary name, then checked and published, and only then marked completed.
 */
@Injectable()
export class ExportRunner {
  private readonly logger = new Logger(ExportRunner.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly exports: ExportsRepository,
    private readonly reads: ExportReadRepository,
    private readonly config: AppConfig,
    @Inject(EXPORT_STORAGE) private readonly storage: ExportStorage,
    @Inject(EXPORT_OUTCOME_LISTENER) private readonly outcome: ExportOutcomeListener,
  ) {}

  async run(record: ExportRecord, owner: string): Promise<RunOutcome> {
    const key = record.storageKey ?? storageKeyOf(record);
    // Leftovers of a worker that died on this export before.
    if (record.attempts > 1) await this.storage.removePartials(key).catch(() => undefined);

    const filter = parseExportFilters(record.filters);
    const statement = exportRowsSql(record.siteId, filter, record.format);
    const withMessages = record.format === 'ndjson' && record.include.includes('messages');
    const batchRows = this.config.exports.batchRows;

    let rows = 0;
    let lost = false;
    let asOf: Date | undefined;
    // The lease is renewed on a timer, not per batch: one slow FETCH must not look like a dead worker.
    const beat = async () => {
      const mine = await this.exports.heartbeat(record.id, owner, rows, asOf).catch(() => true);
      if (!mine) lost = true;
    };
    const timer = setInterval(() => void beat(), Math.max(250, Math.floor(this.config.exports.leaseMs / 3)));

    const upload = await this.storage.open(key);
    const read = this.reads.read();
    let bytes = 0;
    let sha256 = '';
    let writing: ChunkWriter | undefined;
    try {
      asOf = await read.begin();
      await read.declare(statement);
      await beat();

      const siteIdJson = JSON.stringify(record.siteId);
      const out = new ByteChunks();
      // The connection's socket is paused while the storage is behind (ChunkWriter): a FETCH's
      // rows are written out as they arrive, so its lines would otherwise pile up in chunks.
      const writer = new ChunkWriter(upload.stream, (chunk) => out.release(chunk), 2, read.socket);
      writing = writer;
      if (record.format === 'csv') out.add(CSV_HEADER);
      if (withMessages) {
        // A batch's lines need its transcripts first: the rows are kept until they are read.
        // The next batch is asked for before this one is written out: PostgreSQL reads it while
        // this process turns the current one into text (two cores busy, not one at a time).
        // Awaited below; never an unhandled rejection if we stop first.
        const ask = () => read.fetchBatch(batchRows).catch((error: Error) => error);
        let next = ask();
        for (;;) {
          if (lost) throw new ExportLost(record.id);
          const batch = await next;
          if (batch instanceof Error) throw batch;
          if (batch.length === 0) break;
          next = batch.length < batchRows ? Promise.resolve([]) : ask();
          const byConversation = await this.messagesOf(read, batch);
          for (const row of batch) out.add(ndjsonLine(row, siteIdJson, byConversation.get(row[0]!) ?? '[]'));
          writer.write(out.take());
          rows += batch.length;
          await writer.ready();
        }
      } else {
        // Each row becomes its line as it arrives (see fetchEachRow), and a chunk goes to the
        // storage as soon as it is full. Rows are not held, so a round trip can bring more of
        // them: PostgreSQL resumes the cursor only when asked, and each FETCH first waits for it
        // (about 18 ms a FETCH on the loaded 2 cores, a sixth of the export at 2,000 rows).
        const line =
          record.format === 'csv'
            ? (row: RawRow) => csvRecord(csvCells(row))
            : (row: RawRow) => ndjsonLine(row, siteIdJson);
        const onRow = (row: RawRow) => {
          out.add(line(row));
          if (out.filled) writer.write(out.take());
        };
        const fetchRows = batchRows * STREAMED_BATCHES;
        for (;;) {
          if (lost) throw new ExportLost(record.id);
          const fetched = await read.fetchEach(fetchRows, onRow);
          rows += fetched;
          if (fetched < fetchRows) break;
          await writer.ready();
        }
      }
      writer.write(out.end());
      ({ bytes, sha256 } = await writer.end());
      writing = undefined;
      await read.commit();
    } catch (error) {
      writing?.destroy(); // first: the ROLLBACK's answer must not wait on a paused socket
      await read.rollback().catch(() => undefined);
      await upload.abort().catch(() => undefined);
      clearInterval(timer);
      if (error instanceof ExportLost || lost) return 'lost';
      throw error;
    } finally {
      clearInterval(timer);
      writing?.destroy(); // never gives the connection back to the pool with its socket paused
      await read.release().catch(() => undefined);
    }

    if (!(await this.exports.heartbeat(record.id, owner, rows, asOf))) {
      await upload.abort().catch(() => undefined);
      return 'lost';
    }
    await upload.publish({ bytes, sha256 });
    const completed = await this.dataSource.transaction(async (manager) => {
      const done = await this.exports.complete(
        record.id,
        owner,
        { asOf: asOf!, rowCount: rows, bytes, sha256, retentionHours: this.config.exports.retentionHours },
        manager,
      );
      if (done) await this.outcome.completed(done, manager);
      return done;
    });
    if (!completed) {
      // Cancelled (or taken over) between the check and the publish: the file is nobody's.
      await this.storage.remove(key).catch(() => undefined);
      return 'lost';
    }
    this.logger.log({ exportId: record.id, rows, bytes, msg: 'export completed' });
    return 'completed';
  }

  /** The transcripts of a batch's conversations, each as the JSON of its presented messages. */
  private async messagesOf(read: ExportRead, batch: RawRow[]): Promise<Map<string, string>> {
    const messages = await read.messagesOf(batch.map((row) => row[0]!));
    const by = new Map<string, MessageRecord[]>();
    for (const m of messages) {
      const list = by.get(m.conversationId);
      if (list) list.push(m);
      else by.set(m.conversationId, [m]);
    }
    const json = new Map<string, string>();
    for (const [id, list] of by) json.set(id, JSON.stringify(list.map(presentMessage)));
    return json;
  }
}
