import { Client } from 'pg';
import { CLIENT_DEADLINE_GRACE_MS, guardClient, QueryDeadlineError } from './pg-timeouts';

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;

describe('guardClient: a client-side deadline that destroys the connection', () => {
  let client: Client;
  beforeEach(async () => {
    client = new Client({ connectionString: DATABASE_URL });
    await client.connect();
  });
  afterEach(async () => {
    await client.end().catch(() => undefined);
  });

  it('a statement outliving statement timeout + grace fails with ETIMEDOUT and the connection is closed', async () => {
    // This client sets no server-side statement_timeout: only the client deadline can end the
    // statement, as when the server or the network stops answering.
    guardClient(client as never, 200);
    const started = Date.now();
    await expect(client.query('SELECT pg_sleep(5)')).rejects.toBeInstanceOf(QueryDeadlineError);
    expect(Date.now() - started).toBeLessThan(200 + CLIENT_DEADLINE_GRACE_MS + 1500);
    await expect(client.query('SELECT 1')).rejects.toThrow();
  });

  it('SET LOCAL statement_timeout = 0 lifts the deadline until the transaction ends', async () => {
    guardClient(client as never, 100);
    await client.query('BEGIN');
    await client.query('SET LOCAL statement_timeout = 0');
    await expect(client.query('SELECT pg_sleep(1.3)')).resolves.toBeDefined();
    await client.query('COMMIT');
    await client.query(`SET statement_timeout = '100ms'`);
    await expect(client.query('SELECT pg_sleep(3)')).rejects.toThrow(/statement timeout/);
  });
});
