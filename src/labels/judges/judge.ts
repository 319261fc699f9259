import type { LabelVerdict } from '../label-outcome';

/**
 * A judge reads one quiet conversation and returns its label under taxonomy v1.1. Two
 * implementations, chosen by JUDGE: `heuristic` (rules, no model) and `http` (an external service).
 */

/** What a judge decides: the verdict (already checked against the taxonomy) and who decided. */
export interface JudgeVerdict extends LabelVerdict {
  rationale: string | null;
  judge: { kind: JudgeKind; model: string | null; version: string | null };
}

export type JudgeKind = 'heuristic' | 'http';

/** One message as the API shows it (product.md §1 "Message"). */
export interface JudgeMessage {
  id: string;
  role: 'shopper' | 'agent' | 'system';
  createdAt: string;
  rating: 'positive' | 'negative' | null;
  blocks: Array<{ type: string; text?: string; products?: unknown[]; [key: string]: unknown }>;
}

/** The conversation as the API shows it (without messages); judges read only what they need. */
export interface JudgeConversation {
  id: string;
  channel: string;
  language: string;
  productEngagement: { impressions: number; clicks: number };
  feedback: { positive: number; negative: number };
  [field: string]: unknown;
}

export interface JudgeInput {
  conversation: JudgeConversation;
  messages: JudgeMessage[];
}

export interface Judge {
  readonly kind: JudgeKind;
  judge(input: JudgeInput): Promise<JudgeVerdict>;
}

/** Injection token of the configured judge. */
export const JUDGE = Symbol('JUDGE');

/**
 * The judge could not give a valid label (after its retries). The message is kept on the
 * failed label record, so it names the cause without leaking response bodies in full.
 */
export class JudgeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JudgeError';
  }
}
