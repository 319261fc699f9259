import { createHash } from 'node:crypto';
import {
  DocumentFailure,
  emptyCounts,
  ImportCounts,
  NO_LANGUAGE,
  SitemapSource,
  topWithRest,
} from './import-counts';
import { Refusal } from './page-rules';

/**
 * The counts of one import as it runs (documents read and failed, pages found, created, held,
 * excluded, refused, over the cap, created by type and language), and the de-duplication of page
 * identities that `found` counts once each.
 */
export class ImportTally {
  private readonly counts: ImportCounts;
  private readonly byType = new Map<string, number>();
  private readonly byLanguage = new Map<string, number>();
  /** Hashes of page identities seen in this attempt (a URL listed twice counts once in found). */
  private readonly seenPages = new Set<number>();

  constructor(source: SitemapSource) {
    this.counts = emptyCounts(source);
  }

  get documentsRead(): number {
    return this.counts.documentsRead;
  }

  get documentsFailed(): Readonly<Record<DocumentFailure, number>> {
    return this.counts.documentsFailed;
  }

  sitemapSource(source: SitemapSource): void {
    this.counts.sitemapSource = source;
  }

  documentRead(): void {
    this.counts.documentsRead++;
  }

  documentFailed(reason: DocumentFailure, n = 1): void {
    this.counts.documentsFailed[reason] += n;
  }

  refused(reason: Refusal): void {
    this.counts.refused[reason]++;
  }

  /** True the first time a page identity is seen in this attempt (and counts it as found). */
  found(identity: string): boolean {
    const hash = identityHash(identity);
    if (this.seenPages.has(hash)) return false;
    this.seenPages.add(hash);
    this.counts.found++;
    return true;
  }

  excluded(): void {
    this.counts.excluded++;
  }

  alreadyHeld(n = 1): void {
    this.counts.alreadyHeld += n;
  }

  overCap(n: number): void {
    this.counts.overCap += n;
  }

  created(type: string, language: string | null, n = 1): void {
    this.counts.created += n;
    this.byType.set(type, (this.byType.get(type) ?? 0) + n);
    const key = language ?? NO_LANGUAGE;
    this.byLanguage.set(key, (this.byLanguage.get(key) ?? 0) + n);
  }

  /** The counts as the API shows them (a copy). */
  snapshot(): ImportCounts {
    const types = topWithRest(this.byType);
    const languages = topWithRest(this.byLanguage);
    return {
      ...this.counts,
      documentsFailed: { ...this.counts.documentsFailed },
      refused: { ...this.counts.refused },
      createdByType: types.items,
      createdByTypeRest: types.rest,
      createdByLanguageHint: languages.items,
      createdByLanguageHintRest: languages.rest,
    };
  }
}

/** 52 bits of SHA-1: keeps the seen-set small (numbers, not strings) with negligible collisions at 500,000 URLs. */
function identityHash(identity: string): number {
  const digest = createHash('sha1').update(identity).digest();
  return digest.readUIntBE(0, 6) * 16 + (digest[6] >> 4);
}
