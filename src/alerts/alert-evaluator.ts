import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { EventsWriter } from '../events/events.writer';
import type { ScoreName } from '../labels/taxonomy';
import { canonicalFilterText, ConversationFilter, emptyFilter } from '../search/listing/conversation-filter';
import { CONVERSATION_STATS, ConversationStatsEngine } from '../search/stats/conversation-stats';
import { AlertClock } from './alert-clock';
import { presentAlert } from './alert.presenter';
import { AlertOutcomeRow, AlertRecord } from './alert.records';
import { decideAlert, transitionEventType, WindowMeasure, windowFilter } from './alert-rules';
import { AlertsRepository } from './alerts.repository';

/** Alerts one claim takes: the unit an evaluator groups and writes at once. */
export const EVALUATION_BATCH = 1000;
/** Statistics requests one evaluator runs at once. */
export const STATS_CONCURRENCY = 4;
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

interface Group {
  siteId: string;
  filter: ConversationFilter;
  scores: Set<ScoreName>;
  measure?: WindowMeasure;
}

/**
 * Evaluates alerts (workflows-v1 §4) with the statistics engine: the numbers of
 * `…/conversations/stats` for the alert's filters over [now − window, now). Alerts sharing a
 * site, a filter and a window share one statistics request, and share alerts of a site and
 * window one request for the denominator. A change of state is a compare-and-set on the alert's
 * state in the transaction that appends its event and history row: announced once, whatever
 * the number of evaluators racing.
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
   * Evaluates every enabled alert due at `now` (not evaluated in the last interval, less a tenth
   * for timer jitter), claim after claim; alerts another evaluator holds are left to it.
   */
  async evaluateDue(now: Date = this.clock.now()): Promise<EvaluationReport> {
    const intervalMs = this.config.alerts.evaluationIntervalSeconds * 1000;
    const dueBefore = new Date(now.getTime() - intervalMs + Math.min(intervalMs / 10, 5000));
    const report: EvaluationReport = { evaluated: 0, transitions: 0, statsRequests: 0, failed: 0 };
    for (;;) {
      const leaseUntil = new Date(now.getTime() + CLAIM_LEASE_MS);
      const batch = await this.alerts.claimDue(now, dueBefore, leaseUntil, EVALUATION_BATCH);
      if (!batch.length) break;
      try {
        add(report, await this.evaluate(batch, now));
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
  async evaluate(alerts: AlertRecord[], now: Date): Promise<EvaluationReport> {
    const groups = new Map<string, Group>();
    const groupOf = (siteId: string, filter: ConversationFilter): Group => {
      const key = `${siteId}\n${canonicalFilterText(filter)}`;
      let group = groups.get(key);
      if (!group) groups.set(key, (group = { siteId, filter, scores: new Set() }));
      return group;
    };
    const planned = alerts.map((alert) => {
      const matching = groupOf(alert.siteId, windowFilter(alert.filter, alert.window, now));
      if (alert.metric === 'mean') matching.scores.add(alert.score!);
      const all =
        alert.metric === 'share'
          ? groupOf(alert.siteId, windowFilter(emptyFilter(), alert.window, now))
          : undefined;
      return { alert, matching, all };
    });

    await this.measureAll([...groups.values()]);

    const steady: AlertOutcomeRow[] = [];
    const changes: Array<AlertOutcomeRow & { previous: AlertRecord['state']; alert: AlertRecord }> = [];
    let failed = 0;
    for (const { alert, matching, all } of planned) {
      if (!matching.measure || (all && !all.measure)) {
        failed++;
        continue;
      }
      const outcome = decideAlert(alert, matching.measure, all?.measure);
      const row = {
        id: alert.id,
        version: alert.version,
        state: outcome.state,
        value: outcome.value,
        at: now,
      };
      if (outcome.state === alert.state) steady.push(row);
      else changes.push({ ...row, previous: alert.state, alert });
    }
    let evaluated = await this.alerts.recordSteady(steady);
    let transitions = 0;
    for (const change of changes) {
      if (await this.transition(change)) {
        evaluated++;
        transitions++;
      }
    }
    return { evaluated, transitions, statsRequests: groups.size, failed };
  }

  /** One change of state: compare-and-set, event and history row in one transaction. */
  private async transition(change: AlertOutcomeRow & { previous: AlertRecord['state'] }): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const alert = await this.alerts.compareAndSetState(change, manager);
      if (!alert) return false;
      const eventId = await this.events.append(manager, {
        type: transitionEventType(alert.state),
        organizationId: alert.organizationId,
        siteId: alert.siteId,
        object: presentAlert(alert),
      });
      await this.alerts.insertTransition(
        {
          id: eventId,
          alertId: alert.id,
          previousState: change.previous,
          state: alert.state,
          value: alert.value,
          at: change.at,
        },
        manager,
      );
      return true;
    });
  }

  /** Measures every group, STATS_CONCURRENCY at a time; a group whose request fails stays unmeasured. */
  private async measureAll(groups: Group[]): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < groups.length) {
        const group = groups[next++];
        try {
          const result = await this.stats.stats(group.siteId, {
            filter: group.filter,
            facets: [],
            scores: [...group.scores],
            bins: 1,
          });
          const scores: WindowMeasure['scores'] = {};
          for (const name of group.scores) {
            const summary = result.scores?.[name];
            scores[name] = { count: summary?.count ?? 0, mean: summary?.mean ?? null };
          }
          group.measure = { total: result.total, scores };
        } catch (error) {
          this.logger.warn(
            `alerts of site ${group.siteId} not evaluated this time: statistics failed (${(error as Error).message})`,
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(STATS_CONCURRENCY, groups.length) }, worker));
  }
}

function add(total: EvaluationReport, part: EvaluationReport): void {
  total.evaluated += part.evaluated;
  total.transitions += part.transitions;
  total.statsRequests += part.statsRequests;
  total.failed += part.failed;
}
