/** The Bull queue of page imports: one job per import, its id the import id. */
export const PAGE_IMPORT_QUEUE = 'page-imports';
export const PAGE_IMPORT_JOB = 'import';

export interface PageImportJob {
  importId: string;
}

/** Resolves with `promise`, or rejects after `ms` (Bull's add() waits forever while Redis is down). */
export function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]);
}
