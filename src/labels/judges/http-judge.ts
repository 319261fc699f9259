import { withRetry } from '../../common/resilience';
import { checkVerdict } from '../label-outcome';
import type { TaxonomyShape } from '../taxonomy';
import { Judge, JudgeError, JudgeInput, JudgeVerdict } from './judge';

export interface HttpJudgeOptions {
  url: string;
  taxonomy: TaxonomyShape;
  /** Time allowed for one attempt (connect, answer and body). */
  timeoutMs: number;
  /** Attempts in all, the first included. */
  attempts: number;
  /** Wait before the second attempt; doubled before each later one. */
  backoffMs: number;
}

/** Largest answer body read; a label is a few hundred bytes. */
const MAX_BODY_BYTES = 1024 * 1024;

/** A failed attempt; `retry` says whether another attempt may succeed. */
class AttemptError extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
  ) {
    super(message);
  }
}

async function readCapped(response: Response, signal: AbortSignal): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      if (signal.aborted) throw signal.reason;
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_BODY_BYTES)
        throw new AttemptError(`the answer is larger than ${MAX_BODY_BYTES} bytes`, false);
      chunks.push(value);
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Asks an external judge over HTTP: POST JUDGE_URL with
 * `{ taxonomyVersion, conversation, messages }`, expecting 200 with a JSON label that passes the
 * taxonomy check. Network errors, timeouts, 408, 429, 5xx and invalid answers are retried with
 * exponential backoff; other 4xx statuses are not (the request itself was refused). When every
 * attempt failed, a JudgeError names the last cause; the label ends `failed` with that error.
 */
export class HttpJudge implements Judge {
  readonly kind = 'http' as const;

  constructor(private readonly options: HttpJudgeOptions) {}

  async judge(input: JudgeInput): Promise<JudgeVerdict> {
    const body = JSON.stringify({
      taxonomyVersion: this.options.taxonomy.taxonomyVersion,
      conversation: input.conversation,
      messages: input.messages,
    });
    const tries = this.options.attempts;
    try {
      return await withRetry(
        {
          attempts: tries,
          backoffMs: this.options.backoffMs,
          timeoutMs: this.options.timeoutMs,
          retryable: (error) => !(error instanceof AttemptError) || error.retry,
        },
        (signal) => this.attempt(body, signal),
      );
    } catch (error) {
      const last = error instanceof AttemptError ? error : new AttemptError((error as Error).message, true);
      throw new JudgeError(
        `http judge failed${last.retry ? ` after ${tries} attempt${tries === 1 ? '' : 's'}` : ''}: ${last.message}`,
      );
    }
  }

  /** One attempt; `signal` aborts when JUDGE_TIMEOUT_MS has passed. */
  private async attempt(body: string, signal: AbortSignal): Promise<JudgeVerdict> {
    const timedOut = () => new AttemptError(`no complete answer within ${this.options.timeoutMs} ms`, true);
    let response: Response;
    try {
      response = await fetch(this.options.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body,
        signal,
        redirect: 'error',
      });
    } catch (error) {
      if (signal.aborted) throw timedOut();
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new AttemptError(
        `request failed: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
        true,
      );
    }
    const text = await readCapped(response, signal).catch((error) => {
      throw signal.aborted ? timedOut() : error;
    });
    if (response.status !== 200) {
      const retry = response.status >= 500 || response.status === 408 || response.status === 429;
      throw new AttemptError(`answered HTTP ${response.status}`, retry);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new AttemptError('the answer is not valid JSON', true);
    }
    const checked = checkVerdict(parsed, this.options.taxonomy);
    if ('problems' in checked) throw new AttemptError(`invalid label: ${checked.problems.join('; ')}`, true);
    const { verdict, model, version } = checked;
    return { ...verdict, judge: { kind: 'http', model, version } };
  }
}
