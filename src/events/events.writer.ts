import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { newId } from '../common/ids/ids';
import type { EventType } from './event-types';

/** An event to append: what happened, to whom, and the resource as the API shows it now. */
export interface NewEvent {
  type: EventType;
  organizationId: string;
  siteId: string | null;
  /** The resource right after the change, in its public representation (data.object). */
  object: object;
}

/**
 * Appends events to the feed. Always inside the transaction of the change the event describes
 * (`manager` is that transaction): the event commits with the change or not at all. Its feed
 * position is given after commit (EventSequencer), so appending takes no lock.
 */
@Injectable()
export class EventsWriter {
  /** Appends one event; returns its id (evt_…). */
  async append(manager: EntityManager, event: NewEvent): Promise<string> {
    const id = newId('evt');
    await manager.query(
      `INSERT INTO events (id, organization_id, site_id, type, object) VALUES ($1, $2, $3, $4, $5)`,
      [id, event.organizationId, event.siteId, event.type, JSON.stringify(event.object)],
    );
    return id;
  }
}
