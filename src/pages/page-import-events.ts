import type { NewEvent } from '../events/events.writer';
import { presentImport } from './page-import.presenter';
import type { PageImportRecord } from './page-import.records';

/** The page_import.closed event of an import that has just closed. */
export function pageImportClosedEvent(record: PageImportRecord): NewEvent {
  return {
    type: 'page_import.closed',
    organizationId: record.organizationId,
    siteId: record.siteId,
    object: presentImport(record),
  };
}
