import { COUNT_CAP } from '../../src/conversations/conversation-listing.service';
import type { DataSource } from 'typeorm';
import { ConversationsRepository } from '../../src/conversations/conversations.repository';
import { parseListingQuery } from '../../src/conversations/dto/listing-query';
import type { ListingPosition } from '../../src/search/listing/conversation-search';
import { PostgresConversationSearch } from '../../src/search/postgres/postgres-conversation-search';
import {
  ListingQueries,
  PlanShape,
  setLocal,
  SHAPE_SETTINGS,
  ValueReading,
} from '../../src/search/postgres/listing-pools';
import type { QueryValue } from '../query-mix';
import { elapsedMs, summarize, Summary } from './stats';

/** One statement the engine sent, and how: on which listing pool, its values read how. */
export interface RecordedStatement {
  text: string;
  values: unknown[];
  /** The listing pool's plan shape it ran under (its sessions carry the settings); none: the DataSource. */
  shape?: PlanShape;
  /** How its values were read (pg's parsers, or as text). */
  reading?: ValueReading;
}

/** The settings in force for a recorded statement, as SET LOCAL statements (none on the DataSource). */
export function statementSettings(statement: RecordedStatement): string[] {
  return statement.shape ? SHAPE_SETTINGS[statement.shape].map(setLocal) : [];
}

/** A recorded statement's settings as an SQL comment line, to print above its text ('' for none). */
export function settingsComment(statement: RecordedStatement): string {
  const settings = statementSettings(statement);
  return settings.length ? `-- ${settings.join('; ')}\n` : '';
}

/**
 * A stand-in for the DataSource that forwards to the real one and records each statement, so
 * the bench can EXPLAIN exactly what the engine ran.
 */
class RecordingDataSource {
  readonly statements: RecordedStatement[] = [];
  constructor(private readonly dataSource: DataSource) {}

  get options(): DataSource['options'] {
    return this.dataSource.options;
  }

  query(text: string, values?: unknown[]): Promise<unknown> {
    this.statements.push({ text, values: values ?? [] });
    return this.dataSource.query(text, values);
  }
}

/** Records the engine's listing statements, with their plan shape's settings, and runs them. */
class RecordingQueries implements ListingQueries {
  constructor(
    private readonly statements: RecordedStatement[],
    private readonly inner: ListingQueries,
  ) {}

  query<T>(shape: PlanShape, text: string, values: unknown[], reading?: ValueReading): Promise<T[]> {
    this.statements.push({ text, values, shape, reading });
    return this.inner.query<T>(shape, text, values, reading);
  }
}

export interface SqlTiming {
  /**
   * Time of the listing's SQL as ConversationsService.list runs it: the page and (count=true)
   * the count in parallel through the query engine, then the page's rows by id.
   */
  total: Summary;
  /** The count alone, when the request asks for it. */
  count?: Summary;
  /** Statements of one run, in order. */
  statements: RecordedStatement[];
}

/**
 * Times a listing request in Postgres through the service's own query engine
 * (PostgresConversationSearch) and filter parser, in this process, so the SQL is the SQL the
 * service sends. `page` > 1 times the page reached by following the keyset from page 1.
 */
export class SqlTimer {
  private readonly engine: PostgresConversationSearch;
  private readonly recorder: RecordingDataSource;
  private readonly recording: PostgresConversationSearch;
  private readonly rows: ConversationsRepository;
  private readonly recordingRows: ConversationsRepository;

  constructor(dataSource: DataSource) {
    this.engine = PostgresConversationSearch.standalone(dataSource);
    this.rows = new ConversationsRepository(dataSource);
    this.recorder = new RecordingDataSource(dataSource);
    // The same statements, recorded, then run on the first engine's pools.
    this.recording = PostgresConversationSearch.standalone(this.recorder as unknown as DataSource, {
      queries: () => new RecordingQueries(this.recorder.statements, this.engine.listingPools()),
    });
    this.recordingRows = new ConversationsRepository(this.recorder as unknown as DataSource);
  }

  /** The strategies of the plans the engine takes for the request (plansOf). */
  plans(siteId: string, query: Record<string, QueryValue>): Promise<string> {
    return plansOf(this.engine, siteId, query);
  }

  /** Closes the engines' listing pools. */
  async close(): Promise<void> {
    await Promise.all([this.engine.close(), this.recording.close()]);
  }

  async time(
    siteId: string,
    query: Record<string, QueryValue>,
    page: number,
    runs: number,
  ): Promise<SqlTiming> {
    const listing = parseListingQuery(query);
    let after: ListingPosition | undefined;
    for (let i = 1; i < page; i++) {
      const found = await this.engine.page(siteId, listing.filter, { limit: listing.limit, after });
      if (!found.hasMore) throw new Error(`fewer than ${page} pages`);
      after = found.items[found.items.length - 1];
    }
    const once = async (engine: PostgresConversationSearch, rows: ConversationsRepository) => {
      const start = process.hrtime.bigint();
      let countMs: number | undefined;
      const counted = async () => {
        const countStart = process.hrtime.bigint();
        await engine.count(siteId, listing.filter, COUNT_CAP);
        countMs = elapsedMs(countStart);
      };
      const [found] = await Promise.all([
        engine.page(siteId, listing.filter, { limit: listing.limit, after }),
        listing.count ? counted() : undefined,
      ]);
      // As the service: the rows are loaded by id unless the engine read them with the page.
      if (!found.rows)
        await rows.findManyInSite(
          siteId,
          found.items.map((i) => i.id),
        );
      return { total: elapsedMs(start), countMs };
    };

    this.recorder.statements.length = 0;
    await once(this.recording, this.recordingRows);
    const statements = [...this.recorder.statements];

    const totals: number[] = [];
    const counts: number[] = [];
    for (let i = 0; i < runs; i++) {
      const r = await once(this.engine, this.rows);
      totals.push(r.total);
      if (r.countMs !== undefined) counts.push(r.countMs);
    }
    return { total: summarize(totals), ...(counts.length ? { count: summarize(counts) } : {}), statements };
  }
}

/** The plans the engine takes for a request's page and (count=true) count: their strategies. */
export async function plansOf(
  engine: PostgresConversationSearch,
  siteId: string,
  query: Record<string, QueryValue>,
): Promise<string> {
  const listing = parseListingQuery(query);
  const page = await engine.pageWithPlan(siteId, listing.filter, { limit: listing.limit });
  if (!listing.count) return page.plan.strategy;
  const count = await engine.countWithPlan(siteId, listing.filter, COUNT_CAP);
  return `${page.plan.strategy} / count ${count.plan.strategy}`;
}

// meta.count's cap (contract, paging rule 8) is the service's own.
export { COUNT_CAP };

/** EXPLAIN (ANALYZE, BUFFERS) of a recorded statement, under the same SET LOCAL settings. */
export async function explain(dataSource: DataSource, statement: RecordedStatement): Promise<string> {
  return dataSource.transaction(async (manager) => {
    for (const setting of statementSettings(statement)) await manager.query(setting);
    const rows: Array<{ 'QUERY PLAN': string }> = await manager.query(
      `EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`,
      statement.values,
    );
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}
