import { Injectable } from '@nestjs/common';
import {
  collectDefaultMetrics,
  Counter,
  CounterConfiguration,
  Gauge,
  GaugeConfiguration,
  Histogram,
  HistogramConfiguration,
  Registry,
} from 'prom-client';

/**
 * The process's Prometheus registry and the way features add metrics to it. One registry per
 * application (not prom-client's global one), so that several apps in one process (the tests)
 * never clash. Process and event-loop metrics come from prom-client's default collectors.
 *
 * To add a metric from a feature, inject MetricsService and ask for it once, e.g. in the
 * constructor: `this.done = metrics.counter({ name: 'exports_total', help: '…', labelNames: ['outcome'] })`.
 * Asking twice for the same name returns the same metric. Keep labels to small closed sets
 * (never ids or raw paths). A gauge whose value needs SQL or Redis reads it in `collect()`, at
 * scrape time (`beforeScrape`), with a short timeout, never on the request path.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  private readonly scrapeHooks: Array<() => Promise<void>> = [];

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  counter<L extends string>(config: Omit<CounterConfiguration<L>, 'registers'>): Counter<L> {
    return this.existing(config.name) ?? new Counter({ ...config, registers: [this.registry] });
  }

  gauge<L extends string>(config: Omit<GaugeConfiguration<L>, 'registers'>): Gauge<L> {
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

  /** The text exposition format, and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    await Promise.all(this.scrapeHooks.map((hook) => hook()));
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private existing<M>(name: string): M | undefined {
    return this.registry.getSingleMetric(name) as M | undefined;
  }
}
