import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { EventsWriter } from '../events/events.writer';
import type { ExportOutcomeListener } from './export-outcome';
import { presentExport } from './export.presenter';
import type { ExportRecord } from './export.records';

/** Records export.completed / export.failed in the change feed, in the transaction that closes the export. */
@Injectable()
export class ExportEvents implements ExportOutcomeListener {
  constructor(private readonly events: EventsWriter) {}

  completed(record: ExportRecord, manager: EntityManager): Promise<void> {
    return this.append('export.completed', record, manager);
  }

  failed(record: ExportRecord, manager: EntityManager): Promise<void> {
    return this.append('export.failed', record, manager);
  }

  private async append(
    type: 'export.completed' | 'export.failed',
    record: ExportRecord,
    manager: EntityManager,
  ): Promise<void> {
    await this.events.append(manager, {
      type,
      organizationId: record.organizationId,
      siteId: record.siteId,
      object: presentExport(record),
    });
  }
}
