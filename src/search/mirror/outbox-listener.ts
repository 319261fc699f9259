import { Logger } from '@nestjs/common';
import { Client } from 'pg';

/** The channel the outbox's trigger notifies (migration SearchOutboxNotify). */
export const OUTBOX_CHANNEL = 'search_outbox';
/** Wait before connecting again after the listening connection failed. */
const RECONNECT_MS = 1000;

/**
 * A Postgres session of its own that LISTENs on the outbox's channel and calls `onRows` for each
 * notification (sent when a transaction that wrote outbox rows commits). It reconnects after a
 * failure; a notification sent while it was down is lost, which the drain timer covers.
 */
export class OutboxListener {
  private readonly logger = new Logger('SearchMirror');
  private client?: Client;
  private stopped = false;
  private failing = false;
  private retry?: NodeJS.Timeout;

  constructor(
    private readonly databaseUrl: string,
    private readonly onRows: () => void,
  ) {}

  start(): void {
    this.stopped = false;
    void this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({
      connectionString: this.databaseUrl,
      application_name: 'shopping-analytics-outbox-listener',
    });
    client.on('notification', () => this.onRows());
    client.on('error', () => this.reconnect(client));
    client.on('end', () => this.reconnect(client));
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
      if (this.failing) this.logger.log('search mirror: listening to the outbox again');
      this.failing = false;
      // Rows committed while not listening: drain them now.
      this.onRows();
    } catch (error) {
      if (!this.failing)
        this.logger.warn(
          `search mirror: cannot listen to the outbox (${(error as Error).message}); drains run on the timer`,
        );
      this.failing = true;
      this.reconnect(client);
    }
  }

  private reconnect(client: Client): void {
    if (this.client !== client || this.stopped) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    clearTimeout(this.retry);
    this.retry = setTimeout(() => void this.connect(), RECONNECT_MS);
  }
}
