import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import picomatch from 'picomatch';
import { AppConfig, ImportSettings } from '../config/app-config';
import { siteHosts } from '../sites/site-address';
import { SiteRecord } from '../sites/sites.repository';
import { SitesService } from '../sites/sites.service';
import {
  Bound,
  BOUNDS,
  DocumentFailure,
  emptyCounts,
  FailureReason,
  ImportCounts,
  NO_LANGUAGE,
  SitemapSource,
  topWithRest,
} from './import-counts';
import { checkLoc, languageHint, normalizeHreflang, pageType, parseLastmod } from './page-rules';
import { ImportProgress, PageImportRecord, PageImportsRepository } from './page-imports.repository';
import { NewPage, PagesRepository } from './pages.repository';
import { SafeFetcher } from './safe-fetcher';
import { readSitemap, SitemapEntry, SitemapFormatError, SitemapKind } from './sitemap-reader';

export const WELL_KNOWN_SITEMAPS = [
  '/sitemap.xml',
  '/sitemap_index.xml',
  '/sitemap-index.xml',
  '/sitemap.xml.gz',
];
/** robots.txt is read up to this many bytes (as search engines do). */
const MAX_ROBOTS_BYTES = 512 * 1024;

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
    if (record.attempts > 3) {
      // Taken and lost three times already: something in it kills workers.
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

/** The state of one attempt at an import. */
class ImportRun {
  private readonly counts: ImportCounts;
  private readonly bounds = new Set<Bound>();
  private readonly hosts: ReadonlySet<string>;
  private readonly excluded: (path: string) => boolean;
  private readonly deadline: number;
  /** Hashes of page identities seen in this attempt (a URL listed twice counts once in found). */
  private readonly seenPages = new Set<number>();
  private readonly visited = new Set<string>();
  private readonly queue: QueuedSitemap[] = [];
  private readonly byType = new Map<string, number>();
  private readonly byLanguage = new Map<string, number>();
  private sitemapUrl: string | null;
  private urlsSeen = 0;
  private documentsFetched = 0;
  private totalBytes = 0;
  private remainingCap = 0;
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
    const source: SitemapSource = record.sitemapGiven ? 'given' : 'none';
    this.counts = emptyCounts(source);
    this.hosts = siteHosts(site);
    const matchers = site.exclusions.map((glob) => picomatch(glob, { dot: true }));
    this.excluded = (path) => matchers.some((m) => m(path));
    this.deadline = Date.now() + settings.maxDurationMs;
    this.sitemapUrl = record.sitemapGiven ? record.sitemapUrl : null;
  }

  async execute(): Promise<void> {
    let beating = false;
    const heartbeat = setInterval(
      () => {
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
      },
      Math.max(200, Math.floor(this.settings.leaseMs / 3)),
    );
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

  /** Pages an earlier (crashed) attempt created count as created by this import. */
  private async loadEarlierAttempt(): Promise<void> {
    for (const row of await this.pages.tallyCreatedBy(this.record.id))
      this.tally(row.type, row.languageHint, row.n);
    this.remainingCap = Math.max(0, this.site.pageLimit - (await this.pages.countInSite(this.site.id)));
  }

  private tally(type: string, language: string | null, n: number): void {
    this.counts.created += n;
    this.byType.set(type, (this.byType.get(type) ?? 0) + n);
    const key = language ?? NO_LANGUAGE;
    this.byLanguage.set(key, (this.byLanguage.get(key) ?? 0) + n);
  }

  private async discoverAndRead(): Promise<void> {
    if (this.record.sitemapGiven && this.record.sitemapUrl) {
      this.enqueue(new URL(this.record.sitemapUrl), 1);
      await this.drain();
      return;
    }
    const listed = await this.robotsSitemaps();
    if (listed.length > 0) {
      this.counts.sitemapSource = 'robots_txt';
      for (const url of listed) this.enqueue(url, 1);
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
        this.counts.sitemapSource = 'well_known';
        await this.drain();
        return;
      }
    }
  }

  /** `Sitemap:` lines of the site's robots.txt that are on the site (others count as not_on_site). */
  private async robotsSitemaps(): Promise<URL[]> {
    const robots = new URL('/robots.txt', this.site.origin);
    const result = await this.fetcher
      .fetch(
        { url: robots, isOnSite: (host) => this.hosts.has(host), deadline: this.deadline },
        async (body) => {
          const chunks: Buffer[] = [];
          let size = 0;
          for await (const chunk of body) {
            const remaining = MAX_ROBOTS_BYTES - size;
            chunks.push((chunk as Buffer).subarray(0, remaining));
            size += Math.min((chunk as Buffer).length, remaining);
            if (size >= MAX_ROBOTS_BYTES) break;
          }
          this.totalBytes += size;
          return Buffer.concat(chunks).toString('utf8');
        },
      )
      .catch(() => undefined);
    if (!result || !result.ok) return [];
    const urls: URL[] = [];
    const seen = new Set<string>();
    for (const line of result.value.split(/\r\n|\r|\n/)) {
      const match = /^\s*sitemap\s*:\s*(\S+)/i.exec(line);
      if (!match) continue;
      let url: URL;
      try {
        url = new URL(match[1]);
      } catch {
        continue;
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
      url.hash = '';
      if (seen.has(url.href)) continue;
      seen.add(url.href);
      if (!this.hosts.has(url.hostname)) {
        this.fail('not_on_site');
        continue;
      }
      urls.push(url);
    }
    return urls;
  }

  /** Adds a sitemap to read unless already seen or over a bound. */
  private enqueue(url: URL, depth: number): void {
    url.hash = '';
    if (this.visited.has(url.href)) return;
    if (depth > this.settings.maxDepth) {
      this.bounds.add('max_depth');
      return;
    }
    if (this.documentsFetched + this.queue.length >= this.settings.maxDocuments) {
      this.bounds.add('max_documents');
      return;
    }
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
    if (Date.now() < this.deadline) return true;
    this.bounds.add('max_duration');
    this.stopped = true;
    return false;
  }

  private fail(reason: DocumentFailure): void {
    this.counts.documentsFailed[reason]++;
  }

  /**
   * Fetches and reads one sitemap document. A probe of a usual place that is not there (404/410)
   * is a miss, not a failed document.
   */
  private async readDocument(item: QueuedSitemap, probe: boolean): Promise<'read' | 'failed' | 'miss'> {
    if (this.documentsFetched >= this.settings.maxDocuments) {
      this.bounds.add('max_documents');
      this.stopped = true;
      return 'failed';
    }
    this.documentsFetched++;
    // Entries of this document were used (pages stored, sitemaps queued): it was read, even if
    // it is cut short later, and the import's outcome must say so.
    const used = { entries: false };
    let result;
    try {
      result = await this.fetcher.fetch(
        { url: item.url, isOnSite: (host) => this.hosts.has(host), deadline: this.deadline },
        async (body, finalUrl) => {
          this.answered = true;
          this.visited.add(finalUrl.href);
          return readSitemap(body, {
            maxBytes: this.settings.maxDocumentBytes,
            takeBytes: (size) => {
              const allowed = Math.max(0, Math.min(size, this.settings.maxTotalBytes - this.totalBytes));
              this.totalBytes += allowed;
              return allowed;
            },
            onEntries: (kind, entries) => {
              used.entries = true;
              return this.onEntries(kind, entries, item.depth);
            },
          });
        },
      );
    } catch (error) {
      if (error instanceof SitemapFormatError) {
        this.fail(error.failure);
        return this.cutShort(used.entries, item.url);
      }
      throw error;
    }
    if (!result.ok) {
      if (result.importDeadline) {
        this.bounds.add('max_duration');
        this.stopped = true;
        return this.cutShort(used.entries, result.url) === 'read' ? 'read' : 'failed';
      }
      if (probe && result.failure === 'not_found') return 'miss';
      this.fail(result.failure);
      return this.cutShort(used.entries, result.url);
    }
    this.counts.documentsRead++;
    this.sitemapUrl ??= result.url.href;
    if (result.value.stoppedBy === 'max_bytes') this.bounds.add('max_bytes');
    if (result.value.stoppedBy === 'max_total_bytes') {
      this.bounds.add('max_total_bytes');
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
    this.counts.documentsRead++;
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
          this.fail('not_on_site');
          continue;
        }
        this.enqueue(url, depth + 1);
      }
      return true;
    }
    await this.addPages(entries);
    return !this.stopped;
  }

  private async addPages(entries: SitemapEntry[]): Promise<void> {
    const candidates = new Map<string, NewPage>();
    for (const entry of entries) {
      if (this.urlsSeen >= this.settings.maxUrls) {
        this.bounds.add('max_urls');
        this.stopped = true;
        break;
      }
      this.urlsSeen++;
      const verdict = checkLoc(entry.loc, entry.tooLong, this.hosts);
      if (!verdict.ok) {
        this.counts.refused[verdict.reason]++;
        continue;
      }
      const hash = identityHash(verdict.identity);
      if (this.seenPages.has(hash)) continue;
      this.seenPages.add(hash);
      this.counts.found++;
      if (this.excluded(verdict.url.pathname)) {
        this.counts.excluded++;
        continue;
      }
      const own = entry.alternates.find((alt) => sameIdentity(alt.href, verdict.identity))?.hreflang;
      candidates.set(verdict.identity, {
        url: verdict.identity,
        type: pageType(verdict.url),
        languageHint: languageHint(verdict.url, own && normalizeHreflang(own) ? own : undefined) ?? null,
        lastmod: parseLastmod(entry.lastmod),
      });
    }
    if (candidates.size === 0) return;
    const held = await this.pages.existing(this.site.id, [...candidates.keys()]);
    const fresh: NewPage[] = [];
    for (const page of candidates.values()) {
      const holder = held.get(page.url);
      if (holder === undefined) fresh.push(page);
      else if (holder !== this.record.id) this.counts.alreadyHeld++;
      // else: created by an earlier attempt of this import, already counted as created.
    }
    const insert = fresh.slice(0, this.remainingCap);
    this.counts.overCap += fresh.length - insert.length;
    const inserted = await this.pages.insertDiscovered(this.site.id, this.record.id, insert);
    for (const page of insert) {
      if (inserted.has(page.url)) {
        this.remainingCap--;
        this.tally(page.type, page.languageHint, 1);
      } else this.counts.alreadyHeld++; // created meanwhile by someone else
    }
  }

  private progress(): ImportProgress {
    const types = topWithRest(this.byType);
    const languages = topWithRest(this.byLanguage);
    return {
      counts: {
        ...this.counts,
        documentsFailed: { ...this.counts.documentsFailed },
        refused: { ...this.counts.refused },
        createdByType: types.items,
        createdByTypeRest: types.rest,
        createdByLanguageHint: languages.items,
        createdByLanguageHintRest: languages.rest,
      },
      boundsReached: BOUNDS.filter((b) => this.bounds.has(b)),
      sitemapUrl: this.sitemapUrl,
    };
  }

  /** Every sitemap address tried was refused by the address rules (no connection was made to any). */
  private everyAddressRefused(): boolean {
    const failed = this.counts.documentsFailed;
    const others = Object.entries(failed).filter(([reason]) => reason !== 'address_not_allowed');
    return failed.address_not_allowed > 0 && others.every(([, n]) => n === 0);
  }

  private async finish(): Promise<void> {
    let failureReason: FailureReason | null = null;
    if (this.bounds.has('max_duration')) failureReason = 'time_limit';
    else if (this.counts.documentsRead === 0) {
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

/** 52 bits of SHA-1: keeps the seen-set small (numbers, not strings) with negligible collisions at 500,000 URLs. */
function identityHash(identity: string): number {
  const digest = createHash('sha1').update(identity).digest();
  return digest.readUIntBE(0, 6) * 16 + (digest[6] >> 4);
}

function sameIdentity(href: string, identity: string): boolean {
  try {
    const url = new URL(href);
    url.hash = '';
    return url.href === identity;
  } catch {
    return false;
  }
}
