import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import type { Counter, Histogram } from 'prom-client';
import { IntervalJob } from '../common/interval-job';
import { newId } from '../common/ids/ids';
import { SafeFetcher, SendResult } from '../common/net/safe-fetcher';
import { AppConfig } from '../config/app-config';
import { presentEvent } from '../events/event.presenter';
import { EventSequencer } from '../events/event-sequencer';
import { MetricsService } from '../metrics/metrics.service';
import { DISABLE_AFTER_MS, retryDelayMs } from './retry-schedule';
import { signDelivery, WebhookSecrets } from './webhook-secrets';
import { ClaimedMessage, WebhookMessagesRepository } from './webhook-messages.repository';

/** How often a worker looks for due messages and moves the dispatcher along the feed. */
export const POLL_INTERVAL_MS = 200;
/** Events the dispatcher reads from the feed per transaction (× at most 20 webhooks each: ≤ 10,000 messages). */
const DISPATCH_BATCH = 500;
/** Response bytes read at most (the rest is never read). */
export const MAX_RESPONSE_BYTES = 1024;
/** Wakes of the sender this close together make one claim. */
const WAKE_DELAY_MS = 10;
const PURGE_INTERVAL_MS = 10 * 60_000;
const PURGE_BATCH = 5000;
const USER_AGENT = 'ShoppingAnalyticsWebhooks/1.0';

/** What an attempt's answer means for the deliveries log. */
export function attemptVerdict(result: SendResult): { statusCode: number | null; error: string | null } {
  if (!result.ok) return { statusCode: null, error: result.failure };
  if (result.status >= 200 && result.status < 300) return { statusCode: result.status, error: null };
  if (result.status >= 300 && result.status < 400)
    return { statusCode: result.status, error: 'redirect_not_followed' };
  return { statusCode: result.status, error: 'unexpected_status' };
}

/**
 * Webhook delivery on the workers (docs/webhooks.md):
 * - the dispatcher follows the event feed by position (its own stored position) and queues one
 *   message per (event, matching enabled webhook) in the same transaction as it moves;
 * - the sender leases due messages (FOR UPDATE SKIP LOCKED, a lease per message, at most
 *   WEBHOOK_CONCURRENCY_PER_ENDPOINT in flight per endpoint across workers, WEBHOOK_CONCURRENCY
 *   per process), POSTs each through the address guard (connection pinned, no redirects,
 *   WEBHOOK_TIMEOUT_MS, 1 KiB of answer read), records the attempt and schedules the retry.
 * A worker that dies mid-attempt leaves the lease to expire; the message is then sent again.
 * Ticks never wait for sends: a slow endpoint holds its own slots, never the loop.
 */
@Injectable()
export class WebhookDeliveryWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly fetcher: SafeFetcher;
  private stopping = false;
  /** Set when a slot freed up or messages were queued while a claim was running: claim again. */
  private claimAgain = false;
  private wakeTimer?: NodeJS.Timeout;
  private readonly attemptsTotal?: Counter<'outcome'>;
  private readonly attemptSeconds?: Histogram<'outcome'>;
  private readonly lagSeconds?: Histogram;

  private readonly dispatchJob = new IntervalJob(
    {
      name: 'WebhookDispatcher',
      everyMs: POLL_INTERVAL_MS,
      failure: (error) => `events not dispatched to webhooks (${error.message}); retried`,
      recovered: 'events dispatched to webhooks again',
    },
    () => this.dispatch(),
  );

  private readonly sendJob = new IntervalJob(
    {
      name: 'WebhookSender',
      everyMs: POLL_INTERVAL_MS,
      failure: (error) => `webhook messages not claimed (${error.message}); retried`,
      recovered: 'webhook messages claimed again',
    },
    () => this.claimAndSend(),
  );

  private readonly purgeJob = new IntervalJob(
    {
      name: 'WebhookPurge',
      everyMs: PURGE_INTERVAL_MS,
      immediately: true,
      unref: true,
      failure: (error) => `old webhook messages not purged (${error.message}); retried later`,
      recovered: 'old webhook messages purged again',
    },
    () => this.purge(),
  );

  constructor(
    private readonly config: AppConfig,
    private readonly messages: WebhookMessagesRepository,
    private readonly secrets: WebhookSecrets,
    private readonly sequencer: EventSequencer,
    @Optional() metrics?: MetricsService,
  ) {
    this.fetcher = new SafeFetcher({
      allowLoopback: config.webhooks.allowLoopback,
      requestTimeoutMs: config.webhooks.timeoutMs,
      maxRedirects: 0,
    });
    if (metrics) {
      this.attemptsTotal = metrics.counter({
        name: 'webhook_delivery_attempts_total',
        help: 'Webhook delivery attempts by outcome (delivered, or the error of the deliveries log).',
        labelNames: ['outcome'],
      });
      this.attemptSeconds = metrics.histogram({
        name: 'webhook_delivery_attempt_seconds',
        help: 'Duration of one webhook delivery attempt.',
        labelNames: ['outcome'],
        buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      });
      this.lagSeconds = metrics.histogram({
        name: 'webhook_delivery_lag_seconds',
        help: 'From the event to its successful delivery (first attempts only).',
        buckets: [0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
      });
    }
  }

  onApplicationBootstrap(): void {
    this.dispatchJob.start();
    this.sendJob.start();
    this.purgeJob.start();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.dispatchJob.stop();
    this.sendJob.stop();
    this.purgeJob.stop();
    clearTimeout(this.wakeTimer);
    // Attempts in flight end within WEBHOOK_TIMEOUT_MS; their outcomes are recorded.
    await Promise.allSettled([...this.inFlight]);
  }

  /** Positions newly committed events, then queues their messages; wakes the sender when it queued some. */
  async dispatch(): Promise<void> {
    await this.sequencer.catchUp({ wait: false });
    for (;;) {
      const moved = await this.messages.dispatch(DISPATCH_BATCH);
      if (!moved) return;
      if (moved.queued > 0) this.wake();
      if (moved.events < DISPATCH_BATCH) return;
    }
  }

  /**
   * Claims soon (or right after the claim running now): a slot freed up or messages were
   * queued. Wakes within WAKE_DELAY_MS coalesce, so a burst of finished attempts costs one claim.
   */
  private wake(): void {
    this.claimAgain = true;
    if (this.wakeTimer) return;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = undefined;
      void this.sendJob.tick();
    }, WAKE_DELAY_MS);
  }

  /**
   * Leases as many due messages as there are free slots and starts their attempts (not
   * awaited); again while something woke it meanwhile.
   */
  async claimAndSend(): Promise<void> {
    do {
      this.claimAgain = false;
      await this.claimOnce();
    } while (this.claimAgain && !this.stopping);
  }

  private async claimOnce(): Promise<void> {
    if (this.stopping) return;
    const free = this.config.webhooks.concurrency - this.inFlight.size;
    if (free <= 0) return;
    const claimed = await this.messages.claim(
      this.owner,
      this.config.webhooks.leaseMs,
      free,
      this.config.webhooks.concurrencyPerEndpoint,
    );
    if (claimed.length === 0) return;
    for (const message of claimed) {
      const event = message.event;
      const body = message.payload ?? (event ? JSON.stringify(presentEvent(event)) : undefined);
      const attempt: Promise<void> = this.attempt(message, body, event?.createdAt)
        .catch((error: Error) =>
          this.logger.warn(
            `webhook attempt not recorded (${error.message}); its lease will expire and it is sent again`,
          ),
        )
        .finally(() => {
          this.inFlight.delete(attempt);
          // Its slot (and its endpoint's) is free: the next due message need not wait for the tick.
          if (!this.stopping) this.wake();
        });
      this.inFlight.add(attempt);
    }
  }

  /** Deletes finished messages and log entries older than the event retention. */
  async purge(now = new Date()): Promise<void> {
    const cutoff = new Date(now.getTime() - this.config.events.retentionDays * 86_400_000);
    while ((await this.messages.purge(cutoff, PURGE_BATCH)) > 0) {
      // until nothing old is left
    }
  }

  private async attempt(
    message: ClaimedMessage,
    body: string | undefined,
    eventCreatedAt?: Date,
  ): Promise<void> {
    const attemptedAt = new Date();
    let verdict: { statusCode: number | null; error: string | null };
    let durationMs = 0;
    if (body === undefined) {
      // Retention deleted the event before it could be sent: nothing left to send.
      verdict = { statusCode: null, error: 'event_expired' };
    } else {
      const headers = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        ...signDelivery(message.eventId, attemptedAt, body, this.signingSecrets(message, attemptedAt)),
      };
      const started = process.hrtime.bigint();
      const result = await this.fetcher.send({
        url: new URL(message.url),
        headers,
        body,
        maxBodyBytes: MAX_RESPONSE_BYTES,
      });
      durationMs = Math.round(Number(process.hrtime.bigint() - started) / 1e6);
      verdict = attemptVerdict(result);
    }
    const delivered = verdict.error === null;
    const attempts = message.attempts + 1;
    const delay =
      delivered || body === undefined ? undefined : retryDelayMs(attempts, this.config.webhooks.retryScale);
    const { disabled } = await this.messages.record(message, this.owner, {
      deliveryId: newId('whd'),
      attemptedAt,
      ...verdict,
      durationMs,
      delivered,
      retryAt: delay === undefined ? undefined : new Date(Date.now() + delay),
      disableIfFailingSince: new Date(attemptedAt.getTime() - DISABLE_AFTER_MS),
    });
    const outcome = verdict.error ?? 'delivered';
    this.attemptsTotal?.inc({ outcome });
    this.attemptSeconds?.observe({ outcome }, durationMs / 1000);
    if (delivered && message.attempts === 0 && eventCreatedAt)
      this.lagSeconds?.observe((Date.now() - new Date(eventCreatedAt).getTime()) / 1000);
    if (disabled) this.logger.warn(`webhook ${message.webhookId} disabled: no delivery succeeded for 5 days`);
  }

  /** The current secret, and the previous one while it still signs (24 h after a rotation). */
  private signingSecrets(message: ClaimedMessage, at: Date): string[] {
    const secrets = [this.secrets.open(message.secretSealed, message.webhookId)];
    if (
      message.previousSecretSealed &&
      message.previousSecretExpiresAt &&
      new Date(message.previousSecretExpiresAt) > at
    )
      secrets.push(this.secrets.open(message.previousSecretSealed, message.webhookId));
    return secrets;
  }
}
