import { Client, type PoolClient } from 'pg';
import { QueryDeadlineError } from '../database/pg-timeouts';
import { fetchEachRow } from './streamed-fetch';

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;

describe('fetchEachRow: each row of a FETCH handed over as it is read, as the server text, never kept', () => {
  let client: Client;
  const pool = () => client as unknown as PoolClient;
  beforeEach(async () => {
    client = new Client({ connectionString: DATABASE_URL });
    // As on the pool's connections (guardClient): a destroyed connection's error is not unhandled.
    client.on('error', () => undefined);
    await client.connect();
    await client.query('BEGIN');
    await client.query(
      `DECLARE c NO SCROLL CURSOR FOR SELECT i, 'row ' || i, (timestamptz '2026-11-01 12:00:00+00' + i * interval '1 ms') AT TIME ZONE 'UTC', NULL FROM generate_series(1, 2500) i`,
    );
  });
  afterEach(async () => {
    await client.end().catch(() => undefined);
  });

  it('the rows arrive in order as arrays of text (NULL as null); the count is returned; the cursor goes on where it stopped', async () => {
    const seen: unknown[][] = [];
    expect(await fetchEachRow(pool(), 'FETCH 2000 FROM c', (row) => seen.push(row), 5000)).toBe(2000);
    expect(seen[0]).toEqual(['1', 'row 1', '2026-11-01 12:00:00.001', null]);
    expect(seen[1999][0]).toBe('2000');
    expect(await fetchEachRow(pool(), 'FETCH 2000 FROM c', (row) => seen.push(row), 5000)).toBe(500);
    expect(seen.map((row) => Number(row[0]))).toEqual(Array.from({ length: 2500 }, (_, i) => i + 1));
    expect(await fetchEachRow(pool(), 'FETCH 2000 FROM c', () => undefined, 5000)).toBe(0);
  });

  it('an error thrown for a row fails the fetch; the connection stays usable', async () => {
    let calls = 0;
    const failing = fetchEachRow(
      pool(),
      'FETCH 100 FROM c',
      () => {
        if (++calls === 10) throw new Error('no room');
      },
      5000,
    );
    await expect(failing).rejects.toThrow('no room');
    expect(calls).toBe(10);
    await expect(fetchEachRow(pool(), 'FETCH 5 FROM c', () => undefined, 5000)).resolves.toBe(5);
  });

  it('an SQL error rejects; a statement past its deadline closes the connection', async () => {
    await expect(fetchEachRow(pool(), 'FETCH 5 FROM nowhere', () => undefined, 5000)).rejects.toThrow(
      /nowhere/,
    );
    await client.query('ROLLBACK');
    await expect(fetchEachRow(pool(), 'SELECT pg_sleep(5)', () => undefined, 100)).rejects.toBeInstanceOf(
      QueryDeadlineError,
    );
  });
});
