import type { EntityManager } from 'typeorm';
import type { ExportRecord } from './export.records';

/**
 * Told of every export that reaches completed or failed, inside the transaction that closes it,
 * so a change feed (analytics-v1 §3: export.completed, export.failed) can record the event
 * atomically with the state (ExportEvents).
 */
export interface ExportOutcomeListener {
  completed(record: ExportRecord, manager: EntityManager): Promise<void>;
  failed(record: ExportRecord, manager: EntityManager): Promise<void>;
}

export const EXPORT_OUTCOME_LISTENER = Symbol('ExportOutcomeListener');
