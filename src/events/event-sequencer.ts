import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EventsRepository } from './events.repository';

/** Events numbered per sequencer transaction: bounds how long one holds the feed's lock. */
const BATCH = 5000;

/**
 * Gives committed events their feed position, in commit order (see the Events migration and
 * docs/events.md). Any process may run it; the event_feed row lets one sequencer at a time in.
 * Readers run it before reading (waiting for a sequencer at work, a matter of milliseconds),
 * so an event is readable as soon as it commits; the workers also run it on a timer (skipping
 * when another is at work), so positions keep up without readers.
 */
@Injectable()
export class EventSequencer {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: EventsRepository,
  ) {}

  /**
   * Positions every event committed before the call; returns how many this call positioned.
   * With `wait: false`, returns at once when another sequencer is at work.
   */
  async catchUp(options: { wait: boolean } = { wait: true }): Promise<number> {
    if (!(await this.events.hasUnpositioned())) return 0;
    let total = 0;
    for (;;) {
      const n = await this.dataSource.transaction(async (manager) => {
        const head = await this.events.lockHead(manager, options.wait);
        return head === undefined ? undefined : this.events.position(manager, head, BATCH);
      });
      if (n === undefined) return total;
      total += n;
      if (n < BATCH) return total;
    }
  }
}
