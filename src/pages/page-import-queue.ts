/** The Bull queue of page imports: one job per import, its id the import id. */
export const PAGE_IMPORT_QUEUE = 'page-imports';
export const PAGE_IMPORT_JOB = 'import';

export interface PageImportJob {
  importId: string;
}
