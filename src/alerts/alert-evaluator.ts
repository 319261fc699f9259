import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { EventsWriter } from '../events/events.writer';
import { CONVERSATION_STATS, ConversationStatsEngine } from '../search/stats/conversation-stats';
import { DEFAULT_BINS } from '../stats/dto/stats-request';
import { AlertClock } from './alert-clock';
import { presentAlert } from './alert.presenter';
import { AlertOutcomeRow, AlertRecord, AlertState, AlertTransitionRecord } from './alert.records';
import { decideAlert, transitionEventType } from './alert-rules';
import { measureOf, planEvaluation, readFacet, StatsRequestGroup } from './evaluation-plan';
import { AlertsRepository } from './alerts.repository';

/** Alerts one claim takes: the unit an evaluator groups and writes at once. */
export const EVALUATION_BATCH = 1000;
/**
 * Changes of state written in one transaction: one commit for many (a round where every alert
 * changes, such as the first after alerts are created in bulk, is not one commit each), while
 * the alerts' rows stay locked for a bounded time.
 */
export const TRANSITIONS_PER_TRANSACTION = 100;
/** How an evaluator runs (explicit, so the bench can compare settings side by side). */
export interface EvaluationTuning {
  /** Statistics requests one evaluator runs at once. */
  concurrency: number;
  /** Whether filters of one facet condition are read from the facets of their window's request (planEvaluation). */
  viaFacets: boolean;
}

export const DEFAULT_EVALUATION_TUNING: Readonly<EvaluationTuning> = Object.freeze({
  concurrency: 4,
  viaFacets: true,
});
/** An evaluator's claim on an alert: another takes it over after this if the first died. */
export const CLAIM_LEASE_MS = 60_000;

export interface EvaluationReport {
  /** Alerts evaluated and written. */
  evaluated: number;
  /** Changes of state announced (each one event). */
  transitions: number;
  /** Statistics requests made (alerts sharing a site, filter and window share one). */
  statsRequests: number;
  /** Alerts not evaluated because their statistics failed; tried again at the next run. */
  failed: number;
}

/**
 * Evaluates alerts (workflows-v1 §4) with the statistics engine: the numbers of
 * `…/conversations/stats` for the alert's filters over [now − window, now). The requests are
 * planned by planEvaluation (shared by alerts of one site, filter and window; one-facet filters
 * read from the facets of the site's whole-window request) and run `concurrency` at a time on
 * the DataSource's pool. A change of state is a compare-and-set on the alert's state in the
 * transaction that appends its event and history row (up to TRANSITIONS_PER_TRANSACTION
 * changes per transaction): announced once, whatever the number of evaluators racing.
 */
@Injectable()
export class AlertEvaluator {
  private readonly logger = new Logger(AlertEvaluator.name);

  constructor(
    private readonly config: AppConfig,
    private readonly dataSource: DataSource,
    private readonly alerts: AlertsRepository,
    private readonly events: EventsWriter,
    private readonly clock: AlertClock,
    @Inject(CONVERSATION_STATS) private readonly stats: ConversationStatsEngine,
  ) {}

  /**
   * One round: evaluates every enabled alert due when it starts (not evaluated in the last
   * interval, less a tenth for timer jitter), claim after claim, each claim at the time it is
   * taken (`now`, when given, for all of them: the bench's simulated rounds); alerts another
   * evaluator holds are left to it. Alerts this round evaluated are no longer due, so a round
   * that outlasts the interval still ends.
   */
  async evaluateDue(now?: Date, overrides: Partial<EvaluationTuning> = {}): Promise<EvaluationReport> {
    const tuning: EvaluationTuning = { ...DEFAULT_EVALUATION_TUNING, ...overrides };
    const started = now ?? this.clock.now();
    const intervalMs = this.config.alerts.evaluationIntervalSeconds * 1000;
    const dueBefore = new Date(started.getTime() - intervalMs + Math.min(intervalMs / 10, 5000));
    const report: EvaluationReport = { evaluated: 0, transitions: 0, statsRequests: 0, failed: 0 };
    for (;;) {
      const at = now ?? this.clock.now();
      const leaseUntil = new Date(at.getTime() + CLAIM_LEASE_MS);
      const batch = await this.alerts.claimDue(at, dueBefore, leaseUntil, EVALUATION_BATCH);
      if (!batch.length) break;
      try {
        add(report, await this.evaluate(batch, at, tuning));
      } finally {
        await this.alerts.release(
          batch.map((a) => a.id),
          leaseUntil,
        );
      }
      if (batch.length < EVALUATION_BATCH) break;
    }
    return report;
  }

  /** Evaluates these alerts at `now` and writes what they gave. */
  async evaluate(
    alerts: AlertRecord[],
    now: Date,
    tuning: EvaluationTuning = DEFAULT_EVALUATION_TUNING,
  ): Promise<EvaluationReport> {
    const plan = planEvaluation(alerts, now, tuning.viaFacets);
    let statsRequests = await this.measureAll(
      plan.groups.filter((g) => !g.readFrom),
      tuning.concurrency,
    );
    const unread: StatsRequestGroup[] = [];
    for (const group of plan.groups) {
      if (!group.readFrom) continue;
      const { of, facet, value } = group.readFrom;
      if (!of.answer) continue; // its request failed: so does this group, until the next run
      const total = readFacet(of.answer, facet, value);
      if (total === undefined) unread.push(group);
      else group.measure = { total, scores: {} };
    }
    statsRequests += await this.measureAll(unread, tuning.concurrency);
    for (const group of plan.groups) group.answer = undefined;

    const steady: AlertOutcomeRow[] = [];
    const changes: Array<AlertOutcomeRow & { previous: AlertState }> = [];
    let failed = 0;
    for (const { alert, matching, all, converted } of plan.alerts) {
      if (!matching.measure || (all && !all.measure) || (converted && !converted.measure)) {
        failed++;
        continue;
      }
      const outcome = decideAlert(alert, matching.measure, all?.measure, converted?.measure);
      const row = {
        id: alert.id,
        version: alert.version,
        state: outcome.state,
        value: outcome.value,
        at: now,
      };
      if (outcome.state === alert.state) steady.push(row);
      else changes.push({ ...row, previous: alert.state });
    }
    const evaluated = await this.alerts.recordSteady(steady);
    let transitions = 0;
    for (let k = 0; k < changes.length; k += TRANSITIONS_PER_TRANSACTION)
      transitions += await this.transition(changes.slice(k, k + TRANSITIONS_PER_TRANSACTION));
    return { evaluated: evaluated + transitions, transitions, statsRequests, failed };
  }

  /**
   * Changes of state, in one transaction: the compare-and-set of each, then an event and a
   * history row for each one that took. Returns how many took.
   */
  private async transition(changes: Array<AlertOutcomeRow & { previous: AlertState }>): Promise<number> {
    const previous = new Map(changes.map((c) => [c.id, c.previous]));
    return this.dataSource.transaction(async (manager) => {
      const changed = await this.alerts.compareAndSetStates(changes, manager);
      changed.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const history: AlertTransitionRecord[] = [];
      for (const alert of changed) {
        const eventId = await this.events.append(manager, {
          type: transitionEventType(alert.state),
          organizationId: alert.organizationId,
          siteId: alert.siteId,
          object: presentAlert(alert),
        });
        history.push({
          id: eventId,
          alertId: alert.id,
          previousState: previous.get(alert.id)!,
          state: alert.state,
          value: alert.value,
          at: alert.evaluatedAt!,
        });
      }
      await this.alerts.insertTransitions(history, manager);
      return changed.length;
    });
  }

  /**
   * Requests every group's statistics, `concurrency` at a time; a group whose request fails stays
   * unmeasured. Returns the number of requests made.
   */
  private async measureAll(groups: StatsRequestGroup[], concurrency: number): Promise<number> {
    let next = 0;
    const worker = async () => {
      while (next < groups.length) {
        const group = groups[next++];
        try {
          const answer = await this.stats.stats(group.siteId, {
            filter: group.filter,
            facets: [...group.facets],
            scores: [...group.scores],
            // The endpoint's default: a mean is summed per histogram bin, so another number of
            // bins can differ from the endpoint's answer in the last bit.
            bins: DEFAULT_BINS,
          });
          group.measure = measureOf(group, answer);
          if (group.facets.size) group.answer = answer;
        } catch (error) {
          this.logger.warn(
            `alerts of site ${group.siteId} not evaluated this time: statistics failed (${(error as Error).message})`,
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, groups.length) }, worker));
    return groups.length;
  }
}

function add(total: EvaluationReport, part: EvaluationReport): void {
  total.evaluated += part.evaluated;
  total.transitions += part.transitions;
  total.statsRequests += part.statsRequests;
  total.failed += part.failed;
}
