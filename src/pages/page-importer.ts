import { Injectable, Logger } from '@nestjs/common';
import { AppConfig, ImportSettings } from '../config/app-config';
import { siteHosts } from '../sites/site-address';
import { SiteRecord } from '../sites/sites.repository';
import { SitesService } from '../sites/sites.service';
import { ImportBudget } from './import-budget';
import { FailureReason } from './import-counts';
import { ImportTally } from './import-tally';
import { attemptsExhausted, heartbeatEveryMs } from './lease-policy';
import type { PageImportRecord } from './page-import.records';
import { ImportProgress, PageImportsRepository } from './page-imports.repository';
import { PagesRepository } from './pages.repository';
import { PageWriter } from './page-writer';
import { readRobotsSitemaps } from './robots-reader';
import { SafeFetcher } from '../common/net/safe-fetcher';
import { readSitemap, SitemapEntry, SitemapFormatError, SitemapKind } from './sitemap-reader';

export const WELL_KNOWN_SITEMAPS = [
  '/sitemap.xml',
  '/sitemap_index.xml',
  '/sitemap-index.xml',
  '/sitemap.xml.gz',
];

/**
 * Runs one import: takes it (lease), finds the sitemap, reads it within the bounds and adds the
 * pages, then closes it. Safe to run again for the same import after a crash: pages are never
 * created twice, and pages an earlier attempt created still count as created.
 */
@Injectable()
export class PageImporter {
  private readonly logger = new Logger(PageImporter.name);
  private readonly fetcher: SafeFetcher;

  constructor(
    private readonly config: AppConfig,
    private readonly imports: PageImportsRepository,
    private readonly pages: PagesRepository,
    private readonly sites: SitesService,
  ) {
    this.fetcher = new SafeFetcher({
      allowLoopback: config.importAllowLoopback,
      requestTimeoutMs: config.imports.requestTimeoutMs,
      maxRedirects: config.imports.maxRedirects,
    });
  }

  /** Runs the import if it is running and free; returns the closed import, or undefined when it was not this worker's to run. */
  async run(importId: string, owner: string): Promise<PageImportRecord | undefined> {
    const record = await this.imports.claim(importId, owner, this.config.imports.leaseMs);
    if (!record) return undefined;
    if (attemptsExhausted(record.attempts)) {
      // Taken and lost too many times already: something in it kills workers.
      await this.imports.failIfRunning(importId, 'interrupted');
      return this.imports.find(importId);
    }
    let site: SiteRecord;
    try {
      site = await this.sites.getOwned(record.organizationId, record.siteId);
    } catch {
      await this.imports.failIfRunning(importId, 'interrupted');
      return this.imports.find(importId);
    }
    const run = new ImportRun(
      record,
      site,
      owner,
      this.config.imports,
      this.fetcher,
      this.imports,
      this.pages,
    );
    await run.execute();
    const closed = await this.imports.find(importId);
    if (closed) this.logClosed(closed);
    return closed;
  }

  /** One info line per closed import: what operators need to see without querying. */
  private logClosed(record: PageImportRecord): void {
    if (record.state !== 'closed') return;
    const { counts } = record;
    this.logger.log({
      msg: 'page import closed',
      importId: record.id,
      siteId: record.siteId,
      outcome: record.outcome,
      failureReason: record.failureReason,
      documentsRead: counts.documentsRead,
      documentsFailed: Object.values(counts.documentsFailed).reduce((sum, n) => sum + n, 0),
      found: counts.found,
      created: counts.created,
      boundsReached: record.boundsReached,
      durationMs: record.endedAt ? record.endedAt.getTime() - new Date(record.startedAt).getTime() : null,
    });
  }
}

interface QueuedSitemap {
  url: URL;
  /** 1 for the first sitemap; each index level adds one. */
  depth: number;
}

/**
 * One attempt at an import: finds the sitemaps (given, robots.txt, usual places), reads them
 * breadth first within the import's budget, writes the pages and keeps the tally, renewing the
 * lease as it goes.
 */
class ImportRun {
  private readonly tally: ImportTally;
  private readonly budget: ImportBudget;
  private readonly hosts: ReadonlySet<string>;
  private readonly writer: PageWriter;
  private readonly visited = new Set<string>();
  private readonly queue: QueuedSitemap[] = [];
  private sitemapUrl: string | null;
  /** A sitemap request got a 2xx answer (tells no_sitemap_found from no_sitemap_readable). */
  private answered = false;
  private stopped = false;
  private lost = false;

  constructor(
    private readonly record: PageImportRecord,
    private readonly site: SiteRecord,
    private readonly owner: string,
    private readonly settings: ImportSettings,
    private readonly fetcher: SafeFetcher,
    private readonly imports: PageImportsRepository,
    private readonly pages: PagesRepository,
  ) {
    this.tally = new ImportTally(record.sitemapGiven ? 'given' : 'none');
    this.budget = new ImportBudget(settings);
    this.hosts = siteHosts(site);
    this.writer = new PageWriter(site, record.id, this.hosts, pages, this.tally, this.budget);
    this.sitemapUrl = record.sitemapGiven ? record.sitemapUrl : null;
  }

  async execute(): Promise<void> {
    let beating = false;
    const heartbeat = setInterval(() => {
      if (beating || this.lost) return;
      beating = true;
      this.imports
        .heartbeat(this.record.id, this.owner, this.progress())
        .then((held) => {
          if (!held) this.lose();
        })
        .catch(() => undefined)
        .finally(() => {
          beating = false;
        });
    }, heartbeatEveryMs(this.settings.leaseMs));
    try {
      await this.loadEarlierAttempt();
      await this.discoverAndRead();
      if (this.lost) return;
      await this.finish();
    } finally {
      clearInterval(heartbeat);
    }
  }

  private lose(): void {
    this.lost = true;
    this.stopped = true;
  }

  private isOnSite = (host: string): boolean => this.hosts.has(host);

  /** Pages an earlier (crashed) attempt created count as created by this import. */
  private async loadEarlierAttempt(): Promise<void> {
    for (const row of await this.pages.tallyCreatedBy(this.record.id))
      this.tally.created(row.type, row.languageHint, row.n);
    this.budget.setPageRoom(this.site.pageLimit - (await this.pages.countInSite(this.site.id)));
  }

  private async discoverAndRead(): Promise<void> {
    if (this.record.sitemapGiven && this.record.sitemapUrl) {
      this.enqueue(new URL(this.record.sitemapUrl), 1);
      await this.drain();
      return;
    }
    const robots = await readRobotsSitemaps(
      this.fetcher,
      this.site.origin,
      this.isOnSite,
      this.budget.deadline,
    );
    this.budget.addBytes(robots.bytes);
    this.tally.documentFailed('not_on_site', robots.offSite);
    if (robots.onSite.length > 0) {
      this.tally.sitemapSource('robots_txt');
      for (const url of robots.onSite) this.enqueue(url, 1);
      await this.drain();
      return;
    }
    for (const path of WELL_KNOWN_SITEMAPS) {
      if (this.stopped || !this.withinTime()) return;
      const url = new URL(path, this.site.origin);
      if (this.visited.has(url.href)) continue;
      this.visited.add(url.href);
      const result = await this.readDocument({ url, depth: 1 }, true);
      if (result === 'read') {
        this.tally.sitemapSource('well_known');
        await this.drain();
        return;
      }
    }
  }

  /** Adds a sitemap to read unless already seen or over a bound. */
  private enqueue(url: URL, depth: number): void {
    url.hash = '';
    if (this.visited.has(url.href)) return;
    if (!this.budget.mayQueue(depth, this.queue.length)) return;
    this.visited.add(url.href);
    this.queue.push({ url, depth });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && !this.stopped) {
      if (!this.withinTime()) return;
      await this.readDocument(this.queue.shift()!, false);
    }
  }

  private withinTime(): boolean {
    if (this.budget.timeLeft()) return true;
    this.stopped = true;
    return false;
  }

  /**
   * Fetches and reads one sitemap document. A probe of a usual place that is not there (404/410)
   * is a miss, not a failed document.
   */
  private async readDocument(item: QueuedSitemap, probe: boolean): Promise<'read' | 'failed' | 'miss'> {
    if (!this.budget.takeDocument()) {
      this.stopped = true;
      return 'failed';
    }
    // Entries of this document were used (pages stored, sitemaps queued): it was read, even if
    // it is cut short later, and the import's outcome must say so.
    const used = { entries: false };
    let result;
    try {
      result = await this.fetcher.fetch(
        { url: item.url, isOnSite: this.isOnSite, deadline: this.budget.deadline },
        async (body, finalUrl) => {
          this.answered = true;
          this.visited.add(finalUrl.href);
          return readSitemap(body, {
            maxBytes: this.settings.maxDocumentBytes,
            takeBytes: (size) => this.budget.takeBytes(size),
            onEntries: (kind, entries) => {
              used.entries = true;
              return this.onEntries(kind, entries, item.depth);
            },
          });
        },
      );
    } catch (error) {
      if (error instanceof SitemapFormatError) {
        this.tally.documentFailed(error.failure);
        return this.cutShort(used.entries, item.url);
      }
      throw error;
    }
    if (!result.ok) {
      if (result.importDeadline) {
        this.budget.reach('max_duration');
        this.stopped = true;
        return this.cutShort(used.entries, result.url) === 'read' ? 'read' : 'failed';
      }
      if (probe && result.failure === 'not_found') return 'miss';
      this.tally.documentFailed(result.failure);
      return this.cutShort(used.entries, result.url);
    }
    this.tally.documentRead();
    this.sitemapUrl ??= result.url.href;
    if (result.value.stoppedBy === 'max_bytes') this.budget.reach('max_bytes');
    if (result.value.stoppedBy === 'max_total_bytes') {
      this.budget.reach('max_total_bytes');
      this.stopped = true;
    }
    return 'read';
  }

  /**
   * A document that failed after some of its entries were used counts in documentsRead too (and
   * under its failure reason): pages stored from it mean it was read.
   */
  private cutShort(used: boolean, url: URL): 'read' | 'failed' {
    if (!used) return 'failed';
    this.tally.documentRead();
    this.sitemapUrl ??= url.href;
    return 'read';
  }

  /** Entries of one chunk of a document; false stops reading it. */
  private async onEntries(kind: SitemapKind, entries: SitemapEntry[], depth: number): Promise<boolean> {
    if (this.stopped || !this.withinTime()) return false;
    if (kind === 'sitemapindex') {
      for (const entry of entries) {
        let url: URL;
        try {
          url = new URL(entry.loc);
        } catch {
          continue;
        }
        if ((url.protocol !== 'http:' && url.protocol !== 'https:') || entry.tooLong) continue;
        if (!this.hosts.has(url.hostname)) {
          this.tally.documentFailed('not_on_site');
          continue;
        }
        this.enqueue(url, depth + 1);
      }
      return true;
    }
    if (!(await this.writer.write(entries))) this.stopped = true;
    return !this.stopped;
  }

  private progress(): ImportProgress {
    return {
      counts: this.tally.snapshot(),
      boundsReached: this.budget.boundsReached(),
      sitemapUrl: this.sitemapUrl,
    };
  }

  /** Every sitemap address tried was refused by the address rules (no connection was made to any). */
  private everyAddressRefused(): boolean {
    const failed = this.tally.documentsFailed;
    const others = Object.entries(failed).filter(([reason]) => reason !== 'address_not_allowed');
    return failed.address_not_allowed > 0 && others.every(([, n]) => n === 0);
  }

  private async finish(): Promise<void> {
    let failureReason: FailureReason | null = null;
    if (this.budget.has('max_duration')) failureReason = 'time_limit';
    else if (this.tally.documentsRead === 0) {
      if (this.answered) failureReason = 'no_sitemap_readable';
      else if (this.everyAddressRefused()) failureReason = 'address_not_allowed';
      else failureReason = 'no_sitemap_found';
    }
    const held = await this.imports.close(this.record.id, this.owner, {
      ...this.progress(),
      outcome: failureReason ? 'failed' : 'completed',
      failureReason,
    });
    if (!held) this.lost = true;
  }
}
