import { ImportSettings } from '../config/app-config';
import { Bound, BOUNDS } from './import-counts';

/**
 * What one import may still spend: time (IMPORT_MAX_DURATION_MS), bytes (IMPORT_MAX_TOTAL_BYTES),
 * documents (IMPORT_MAX_DOCUMENTS), URLs (IMPORT_MAX_URLS), index depth (IMPORT_MAX_DEPTH) and
 * room for pages under the site's page limit. Records each bound it reaches (boundsReached).
 */
export class ImportBudget {
  /** Epoch ms at which the import's time is up. */
  readonly deadline: number;
  private readonly reached = new Set<Bound>();
  private bytes = 0;
  private documents = 0;
  private urls = 0;
  private pageRoom = 0;

  constructor(
    private readonly settings: ImportSettings,
    now = Date.now(),
  ) {
    this.deadline = now + settings.maxDurationMs;
  }

  /** False once the import's time is up (and max_duration is recorded). */
  timeLeft(): boolean {
    if (Date.now() < this.deadline) return true;
    this.reached.add('max_duration');
    return false;
  }

  reach(bound: Bound): void {
    this.reached.add(bound);
  }

  has(bound: Bound): boolean {
    return this.reached.has(bound);
  }

  /** The bounds reached, in the order the API lists them. */
  boundsReached(): Bound[] {
    return BOUNDS.filter((b) => this.reached.has(b));
  }

  /** Takes up to `size` bytes of the import's byte budget; returns how many may be read. */
  takeBytes(size: number): number {
    const allowed = Math.max(0, Math.min(size, this.settings.maxTotalBytes - this.bytes));
    this.bytes += allowed;
    return allowed;
  }

  /** Counts bytes read outside the sitemap documents (robots.txt) against the budget. */
  addBytes(size: number): void {
    this.bytes += size;
  }

  /** Whether a sitemap at this index depth may be queued behind `queued` others (records the bound that stops it). */
  mayQueue(depth: number, queued: number): boolean {
    if (depth > this.settings.maxDepth) {
      this.reached.add('max_depth');
      return false;
    }
    if (this.documents + queued >= this.settings.maxDocuments) {
      this.reached.add('max_documents');
      return false;
    }
    return true;
  }

  /** Takes one document fetch; false (max_documents) when none is left. */
  takeDocument(): boolean {
    return this.takeOne('documents', this.settings.maxDocuments, 'max_documents');
  }

  /** Takes one `<url>` entry; false (max_urls) when none is left. */
  takeUrl(): boolean {
    return this.takeOne('urls', this.settings.maxUrls, 'max_urls');
  }

  /** Counts one more against `max`, or records `bound` (and counts nothing) when none is left. */
  private takeOne(counter: 'documents' | 'urls', max: number, bound: Bound): boolean {
    if (this[counter] >= max) {
      this.reached.add(bound);
      return false;
    }
    this[counter]++;
    return true;
  }

  /** Pages the site may still receive (its page limit less the pages it holds). */
  setPageRoom(room: number): void {
    this.pageRoom = Math.max(0, room);
  }

  /** How many of `wanted` new pages fit under the site's page limit. */
  pagesThatFit(wanted: number): number {
    return Math.min(wanted, this.pageRoom);
  }

  /** One page was created. */
  usePage(): void {
    this.pageRoom--;
  }
}
