import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  CounterConfiguration,
  Gauge,
  GaugeConfiguration,
  Histogram,
  HistogramConfiguration,
  MetricObjectWithValues,
  MetricValue,
  Registry,
} from 'prom-client';
import {
  answerMetricsRequests,
  gatherPeerMetrics,
  isHttpProcessOfCluster,
} from '../common/process/http-processes';
import { within } from '../common/resilience';

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/** Longest a scrape waits for one source (Postgres, Redis) before reporting it as failed. */
export const SCRAPE_TIMEOUT_MS = 2000;

/**
 * The process's Prometheus registry and the way features add metrics to it. One registry per
 * application (not prom-client's global one), so that several apps in one process (the tests)
 * never clash. Process and event-loop metrics come from prom-client's default collectors.
 *
 * To add a metric from a feature, inject MetricsService and ask for it once, e.g. in the
 * constructor: `this.done = metrics.counter({ name: 'exports_total', help: '…', labelNames: ['outcome'] })`.
 * Asking twice for the same name returns the same metric. Keep labels to small closed sets
 * (never ids or raw paths). Gauges whose values need SQL or Redis are read at scrape time
 * (`readAtScrape`), never on the request path: each feature registers its own in a collector of
 * its folder (`<feature>.metrics.ts`), its queues with QueueMetrics. MetricsService is absent
 * where MetricsModule is not loaded (the worker, the CLI): collectors inject it @Optional().
 *
 * With HTTP_PROCESSES > 1 the process answering the scrape reports the whole service: its own
 * registry merged with every other HTTP process's (asked through the primary, prom-client's
 * aggregation: counters and histograms summed, default metrics by their own rule). Gauges made
 * here describe the service (read at scrape time), so the answering process's value is reported.
 */
@Injectable()
export class MetricsService implements OnModuleDestroy {
  readonly registry = new Registry();
  private readonly scrapeHooks: Array<() => Promise<void>> = [];
  /** The sources `readAtScrape` reads: each once per scrape. */
  private readonly sources = new Set<string>();
  /** Gauges made by `gauge()`: the answering process's values, never summed over processes. */
  private readonly serviceGauges = new Set<string>();
  private readonly stopAnswering?: () => void;
  private readonly logger = new Logger('Metrics');
  private readonly collectErrors: Counter<'source'>;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.collectErrors = this.counter({
      name: 'metrics_collect_errors_total',
      help: 'Scrapes in which a source (search_outbox, labeling, page_imports, exports, queues) failed or timed out.',
      labelNames: ['source'],
    });
    if (isHttpProcessOfCluster()) {
      this.stopAnswering = answerMetricsRequests(() => this.registry.getMetricsAsJSON());
    }
  }

  onModuleDestroy(): void {
    this.stopAnswering?.();
  }

  counter<L extends string>(config: Omit<CounterConfiguration<L>, 'registers'>): Counter<L> {
    return this.existing(config.name) ?? new Counter({ ...config, registers: [this.registry] });
  }

  gauge<L extends string>(config: Omit<GaugeConfiguration<L>, 'registers'>): Gauge<L> {
    this.serviceGauges.add(config.name);
    return this.existing(config.name) ?? new Gauge({ ...config, registers: [this.registry] });
  }

  histogram<L extends string>(config: Omit<HistogramConfiguration<L>, 'registers'>): Histogram<L> {
    return this.existing(config.name) ?? new Histogram({ ...config, registers: [this.registry] });
  }

  /**
   * Runs `hook` before each scrape, all hooks at once: where a feature reads Postgres or Redis
   * (with a short timeout, swallowing its own errors) and sets its gauges. One read per source
   * and scrape, whatever the number of gauges it feeds.
   */
  beforeScrape(hook: () => Promise<void>): void {
    this.scrapeHooks.push(hook);
  }

  /**
   * Reads `source` once per scrape, within SCRAPE_TIMEOUT_MS, and sets its gauges with `apply`.
   * A read that fails or is slower counts one `metrics_collect_errors_total{source}` and leaves
   * the gauges without a value for that scrape (labelled ones with no series, the others NaN);
   * the rest of the scrape still answers. A source registered again (a module imported twice
   * makes its collector twice) keeps its first registration.
   */
  readAtScrape<T>(source: string, gauges: Gauge[], read: () => Promise<T>, apply: (value: T) => void): void {
    if (this.sources.has(source)) return;
    this.sources.add(source);
    this.beforeScrape(async () => {
      let value: T;
      try {
        value = await within(read(), SCRAPE_TIMEOUT_MS);
      } catch (error) {
        this.collectErrors.inc({ source });
        this.logger.warn(`could not read ${source} for /metrics (${(error as Error).message})`);
        for (const gauge of gauges) {
          gauge.reset();
          if (!(gauge as unknown as { labelNames: string[] }).labelNames.length) gauge.set(Number.NaN);
        }
        return;
      }
      for (const gauge of gauges) gauge.reset();
      apply(value);
    });
  }

  /** The text exposition format, and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    await Promise.all(this.scrapeHooks.map((hook) => hook()));
    if (!isHttpProcessOfCluster()) {
      return { contentType: this.registry.contentType, body: await this.registry.metrics() };
    }
    const [own, peers] = await Promise.all([this.registry.getMetricsAsJSON(), gatherPeerMetrics()]);
    const merged = AggregatorRegistry.aggregate([
      // 'omit' (the start time) would drop the metric: the answering process's is reported.
      own.map((metric) =>
        metric.aggregator === 'omit' ? { ...metric, aggregator: 'first' as const } : metric,
      ),
      ...(peers as MetricsJson[]).map((metrics) =>
        metrics.filter((metric) => !this.serviceGauges.has(metric.name) && metric.aggregator !== 'omit'),
      ),
    ]);
    return { contentType: merged.contentType, body: await merged.metrics() };
  }

  private existing<M>(name: string): M | undefined {
    return this.registry.getSingleMetric(name) as M | undefined;
  }
}
