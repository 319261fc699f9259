import picomatch from 'picomatch';
import { SiteRecord } from '../sites/sites.repository';
import { ImportBudget } from './import-budget';
import { ImportTally } from './import-tally';
import { checkLoc, languageHint, normalizeHreflang, pageType, parseLastmod } from './page-rules';
import { NewPage, PagesRepository } from './pages.repository';
import { SitemapEntry } from './sitemap-reader';

/**
 * Turns the `<url>` entries of a sitemap into discovered pages of the site: each `<loc>` is
 * checked (refused), de-duplicated (found), matched against the site's exclusions (excluded),
 * compared with the pages the site holds (alreadyHeld) and created within the site's page limit
 * (created, overCap). Pages are never created twice, whoever races for them.
 */
export class PageWriter {
  private readonly excluded: (path: string) => boolean;

  constructor(
    private readonly site: SiteRecord,
    private readonly importId: string,
    private readonly hosts: ReadonlySet<string>,
    private readonly pages: PagesRepository,
    private readonly tally: ImportTally,
    private readonly budget: ImportBudget,
  ) {
    const matchers = site.exclusions.map((glob) => picomatch(glob, { dot: true }));
    this.excluded = (path) => matchers.some((m) => m(path));
  }

  /** Writes the pages of one batch of entries; false when the import's URL bound stopped it. */
  async write(entries: SitemapEntry[]): Promise<boolean> {
    let more = true;
    const candidates = new Map<string, NewPage>();
    for (const entry of entries) {
      if (!this.budget.takeUrl()) {
        more = false;
        break;
      }
      const verdict = checkLoc(entry.loc, entry.tooLong, this.hosts);
      if (!verdict.ok) {
        this.tally.refused(verdict.reason);
        continue;
      }
      if (!this.tally.found(verdict.identity)) continue;
      if (this.excluded(verdict.url.pathname)) {
        this.tally.excluded();
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
    if (candidates.size > 0) await this.insert([...candidates.values()]);
    return more;
  }

  private async insert(candidates: NewPage[]): Promise<void> {
    const held = await this.pages.existing(
      this.site.id,
      candidates.map((page) => page.url),
    );
    const fresh: NewPage[] = [];
    for (const page of candidates) {
      const holder = held.get(page.url);
      if (holder === undefined) fresh.push(page);
      else if (holder !== this.importId) this.tally.alreadyHeld();
      // else: created by an earlier attempt of this import, already counted as created.
    }
    const insert = fresh.slice(0, this.budget.pagesThatFit(fresh.length));
    this.tally.overCap(fresh.length - insert.length);
    const inserted = await this.pages.insertDiscovered(this.site.id, this.importId, insert);
    for (const page of insert) {
      if (inserted.has(page.url)) {
        this.budget.usePage();
        this.tally.created(page.type, page.languageHint);
      } else this.tally.alreadyHeld(); // created meanwhile by someone else
    }
  }
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
