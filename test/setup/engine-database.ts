import { afterAll, beforeAll } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { createDataSource } from '../../src/database/data-source';
import { PostgresConversationSearch } from '../../src/search/postgres/postgres-conversation-search';
import { createIsolatedDatabase } from './isolated-database';

/** The Postgres listing engine alone (no app) on a database of its own, its rows arranged with SQL. */
export interface EngineDatabase {
  url: string;
  dataSource: DataSource;
  engine: PostgresConversationSearch;
}

/**
 * An EngineDatabase made (migrated, empty) before the tests of the calling `describe` and closed
 * and dropped after them; `use` receives it (to set the describe's variables).
 */
export function engineDatabasePerSuite(use: (database: EngineDatabase) => void): void {
  let drop: (() => Promise<void>) | undefined;
  let made: EngineDatabase | undefined;
  beforeAll(async () => {
    const database = await createIsolatedDatabase();
    drop = database.drop;
    const dataSource = createDataSource(database.url, { poolSize: 2 });
    await dataSource.initialize();
    made = { url: database.url, dataSource, engine: PostgresConversationSearch.standalone(dataSource) };
    use(made);
  });
  afterAll(async () => {
    await made?.engine.close();
    await made?.dataSource.destroy();
    await drop?.();
  });
}
