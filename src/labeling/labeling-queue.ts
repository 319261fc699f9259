/** The labeling queue (Bull): its name, its two jobs and the label job's id. */
export const LABELING_QUEUE = 'labeling';
/** The due-conversation scan, once per LABEL_SCAN_INTERVAL_SECONDS across processes. */
export const SCAN_JOB = 'scan';
/** Labels one conversation as of one activity time. */
export const LABEL_JOB = 'label';

export interface LabelJobData {
  conversationId: string;
  /** ISO time of the activity the label is for: part of the job id. */
  updatedAt: string;
}

/** One job per (conversation, activity time): enqueuing it twice adds it once; new activity gets a new job. */
export function labelJobId(conversationId: string, updatedAt: Date): string {
  return `label:${conversationId}:${updatedAt.getTime()}`;
}
