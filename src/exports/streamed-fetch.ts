import { Query, type PoolClient } from 'pg';
import { CLIENT_DEADLINE_GRACE_MS, QueryDeadlineError } from '../database/pg-timeouts';
import { RAW_TEXT, RawRow } from '../database/records/conversation-text';

/**
 * Runs `text` (a FETCH) on `client` and hands each row to `onRow` as pg reads it off the socket,
 * never keeping the rows: the resolved value is their number. A row handled at once dies young
 * (a scavenge frees it); a row kept in a batch until the batch is written out lives through
 * scavenges, is promoted and piles up in the old generation until a full collection — most of
 * an export's memory growth before. An error thrown by `onRow` fails the fetch (the remaining
 * rows are read and dropped).
 *
 * Submitted queries skip the pool's client-side deadline (src/database/pg-timeouts.ts), so the
 * same one is kept here: past `statementTimeoutMs` plus the grace, the connection is closed.
 */
export function fetchEachRow(
  client: PoolClient,
  text: string,
  onRow: (row: RawRow) => void,
  statementTimeoutMs: number,
): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const query = new Query<RawRow>({ text, ...RAW_TEXT });
    let count = 0;
    let failure: unknown;
    const deadlineMs = statementTimeoutMs + CLIENT_DEADLINE_GRACE_MS;
    const timer = setTimeout(() => {
      const connection = (client as unknown as { connection?: { stream?: { destroy(e: Error): void } } })
        .connection;
      connection?.stream?.destroy(new QueryDeadlineError(deadlineMs));
    }, deadlineMs);
    timer.unref();
    query.on('row', (row: RawRow) => {
      if (failure !== undefined) return;
      try {
        onRow(row);
        count++;
      } catch (error) {
        failure = error;
      }
    });
    query.on('error', (error: Error) => {
      clearTimeout(timer);
      reject(error);
    });
    query.on('end', () => {
      clearTimeout(timer);
      if (failure !== undefined) reject(failure instanceof Error ? failure : new Error(String(failure)));
      else resolve(count);
    });
    client.query(query);
  });
}
