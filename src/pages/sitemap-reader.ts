import { createGunzip } from 'node:zlib';
import { SaxesParser, SaxesTagNS } from 'saxes';

export const SITEMAP_NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const XHTML_NS = 'http://www.w3.org/1999/xhtml';

/** Longest `<loc>` text kept; longer ones are reported with `tooLong` (refused too_long). */
export const MAX_LOC_LENGTH = 2048;
/** Alternates kept per `<url>` (more are ignored). */
const MAX_ALTERNATES = 200;
/**
 * Deepest element nesting accepted (the root is depth 1). A sitemap is 3 levels deep, 5 with the
 * image/video/news extensions; anything deeper is refused as soon as it is opened, which also
 * keeps saxes' namespace lookup (a walk down the open-tag stack per element) constant per element.
 */
export const MAX_XML_DEPTH = 16;
/** Attributes accepted on one element (a urlset root declares about ten namespaces). */
export const MAX_ATTRIBUTES = 64;
/** Characters of attribute names and values held for one element (saxes keeps them until the tag ends). */
export const MAX_ATTRIBUTE_CHARS = 64 * 1024;
/** Characters handed to the parser in one step; the reader yields to the event loop between steps. */
const PARSE_SLICE_CHARS = 16 * 1024;
/** Parsing time after which the reader lets other work (requests, timers) run before going on. */
const YIELD_AFTER_MS = 10;

export interface SitemapEntry {
  loc: string;
  /** The `<loc>` text was longer than MAX_LOC_LENGTH (loc holds its start only). */
  tooLong: boolean;
  lastmod?: string;
  /** `xhtml:link rel="alternate"` of a `<url>`. */
  alternates: Array<{ hreflang: string; href: string }>;
}

export type SitemapKind = 'urlset' | 'sitemapindex';

/** The document is not a sitemap we can read: the document-side reasons of documentsFailed. */
export class SitemapFormatError extends Error {
  constructor(
    readonly failure: 'not_a_sitemap' | 'unreadable',
    message: string,
  ) {
    super(message);
    this.name = 'SitemapFormatError';
  }
}

export interface ReadOptions {
  /** Decompressed bytes read from this document at most. */
  maxBytes: number;
  /** Called with each chunk's decompressed size before it is parsed; returns how many bytes may be read (import-wide budget). */
  takeBytes(size: number): number;
  /** Receives the entries parsed from one chunk; returning `false` stops reading. */
  onEntries(kind: SitemapKind, entries: SitemapEntry[]): Promise<boolean>;
}

export interface ReadSummary {
  kind: SitemapKind;
  bytes: number;
  /** Why reading stopped before the end: this document's byte bound, the import's byte budget, or the consumer. */
  stoppedBy?: 'max_bytes' | 'max_total_bytes' | 'consumer';
}

/**
 * Reads a sitemap (urlset) or sitemap index as a stream: gzip is detected by its magic bytes
 * (one or two layers), bytes are counted after decompression, text must be UTF-8, and the XML
 * is parsed with saxes, which never fetches anything and does not expand entities. Any
 * document type declaration (where entity tricks such as "billion laughs" and external
 * entities live) makes the document unreadable; HTML's `<!DOCTYPE html>` is let through so an
 * HTML page reads as not_a_sitemap. Memory stays flat: only the current chunk and the entries
 * of one chunk are held.
 */
export async function readSitemap(body: AsyncIterable<Buffer>, options: ReadOptions): Promise<ReadSummary> {
  const parser = new SaxesParser({ xmlns: true, position: false });
  // Text handlers are attached only inside <loc> and <lastmod>: saxes does not buffer text
  // nobody listens to, so whitespace or prose elsewhere costs no memory.
  const onText = (text: string) => state.text(text);
  const state = new ParseState((capturing) => {
    if (capturing) {
      parser.on('text', onText);
      parser.on('cdata', onText);
    } else {
      parser.off('text');
      parser.off('cdata');
    }
  });
  parser.on('error', (error) => {
    throw new SitemapFormatError('unreadable', `malformed XML: ${error.message}`);
  });
  parser.on('xmldecl', (decl) => {
    if (decl.encoding && !/^(utf-?8|us-ascii)$/i.test(decl.encoding)) {
      throw new SitemapFormatError('unreadable', `unsupported encoding ${decl.encoding}`);
    }
  });
  parser.on('doctype', (doctype) => {
    if (!/^\s*html\s*$/i.test(doctype))
      throw new SitemapFormatError('unreadable', 'document type declarations are not accepted');
  });
  parser.on('opentagstart', () => state.startTag());
  parser.on('attribute', (attr) => state.attribute(attr.name.length + attr.value.length));
  parser.on('opentag', (tag) => state.open(tag as SaxesTagNS));
  parser.on('closetag', () => state.close());

  const decoder = new TextDecoder('utf-8', { fatal: true });
  let bytes = 0;
  let stoppedBy: ReadSummary['stoppedBy'];
  let busySince = performance.now();
  const source = decompressed(body, 2);
  try {
    for await (const raw of source) {
      let chunk = raw as Buffer;
      if (bytes + chunk.length > options.maxBytes) {
        chunk = chunk.subarray(0, options.maxBytes - bytes);
        stoppedBy = 'max_bytes';
      }
      const allowed = options.takeBytes(chunk.length);
      if (allowed < chunk.length) {
        chunk = chunk.subarray(0, allowed);
        stoppedBy = 'max_total_bytes';
      }
      bytes += chunk.length;
      let text: string;
      try {
        text = decoder.decode(chunk, { stream: true });
      } catch {
        throw new SitemapFormatError('unreadable', 'the document is not valid UTF-8');
      }
      // In slices, yielding between them when parsing has held the thread for a while: one
      // import never stalls the requests this process serves.
      for (let at = 0; at < text.length; at += PARSE_SLICE_CHARS) {
        parser.write(
          at === 0 && text.length <= PARSE_SLICE_CHARS ? text : text.slice(at, at + PARSE_SLICE_CHARS),
        );
        if (bufferedLength(parser) > MAX_TOKEN_CHARS) {
          throw new SitemapFormatError(
            'unreadable',
            `a single XML token (text, comment, CDATA or attribute) is over ${MAX_TOKEN_CHARS} characters`,
          );
        }
        if (performance.now() - busySince > YIELD_AFTER_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          busySince = performance.now();
        }
      }
      if (state.entries.length > 0) {
        const entries = state.entries;
        state.entries = [];
        if (!(await options.onEntries(state.kind!, entries))) {
          stoppedBy ??= 'consumer';
        }
      }
      if (stoppedBy) break;
    }
    if (!stoppedBy) {
      try {
        decoder.decode();
      } catch {
        throw new SitemapFormatError('unreadable', 'the document is not valid UTF-8');
      }
      parser.close();
      if (!state.kind) throw new SitemapFormatError('unreadable', 'the document is empty');
    }
  } catch (error) {
    if (error instanceof SitemapFormatError) throw error;
    const code = (error as { code?: string }).code ?? '';
    if (code.startsWith('Z_') || code === 'ERR_INVALID_ARG_TYPE')
      throw new SitemapFormatError('unreadable', 'broken gzip data');
    throw error;
  } finally {
    source.return?.(undefined);
  }
  if (!state.kind) throw new SitemapFormatError('unreadable', 'no root element was read');
  return { kind: state.kind, bytes, stoppedBy };
}

/** Longest single token (text, comment, CDATA section, attribute value, name) saxes may buffer. */
export const MAX_TOKEN_CHARS = 1024 * 1024;

/**
 * Characters saxes holds for the token it is in the middle of. saxes (6.x) keeps comments, CDATA,
 * attribute values and listened-to text in `text` and names in `name` until the token ends;
 * reading them is the only way to bound that memory while streaming.
 */
function bufferedLength(parser: SaxesParser): number {
  const internal = parser as unknown as { text?: string; name?: string };
  return (internal.text?.length ?? 0) + (internal.name?.length ?? 0);
}

/** The body, gunzipped (up to `layers` times) when it starts with the gzip magic bytes. */
async function* decompressed(body: AsyncIterable<Buffer>, layers: number): AsyncGenerator<Buffer> {
  const iterator = body[Symbol.asyncIterator]();
  let head = Buffer.alloc(0);
  while (head.length < 2) {
    const next = await iterator.next();
    if (next.done) break;
    head = Buffer.concat([head, next.value as Buffer]);
  }
  async function* rest(): AsyncGenerator<Buffer> {
    if (head.length > 0) yield head;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value as Buffer;
    }
  }
  if (layers > 0 && head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) {
    const gunzip = createGunzip();
    const feed = rest();
    // Feed by hand so the gunzip output is pulled at the reader's pace (a gzip bomb never inflates ahead).
    const pump = (async () => {
      try {
        for await (const chunk of feed) {
          if (gunzip.destroyed) return;
          if (!gunzip.write(chunk))
            await new Promise<void>((resolve) => {
              const done = () => {
                gunzip.off('drain', done);
                gunzip.off('close', done);
                resolve();
              };
              gunzip.on('drain', done);
              gunzip.on('close', done);
            });
        }
        if (!gunzip.destroyed) gunzip.end();
      } catch (error) {
        gunzip.destroy(error as Error);
      }
    })();
    try {
      yield* decompressed(gunzip, layers - 1);
    } finally {
      gunzip.destroy();
      await feed.return(undefined);
      await pump.catch(() => undefined);
    }
    return;
  }
  yield* rest();
}

/** Element stack of one sitemap document, turning `<url>` / `<sitemap>` elements into entries. */
class ParseState {
  kind?: SitemapKind;
  entries: SitemapEntry[] = [];
  private depth = 0;
  private entry?: SitemapEntry;
  private field?: 'loc' | 'lastmod';
  private buffer = '';
  private attributes = 0;
  private attributeChars = 0;

  constructor(private readonly capture: (on: boolean) => void) {}

  startTag(): void {
    // Checked before saxes resolves the tag's namespace, so a deep document costs nothing more.
    if (this.depth >= MAX_XML_DEPTH)
      throw new SitemapFormatError('unreadable', `elements are nested deeper than ${MAX_XML_DEPTH} levels`);
    this.attributes = 0;
    this.attributeChars = 0;
  }

  attribute(chars: number): void {
    this.attributes++;
    this.attributeChars += chars;
    if (this.attributes > MAX_ATTRIBUTES)
      throw new SitemapFormatError('unreadable', `an element has more than ${MAX_ATTRIBUTES} attributes`);
    if (this.attributeChars > MAX_ATTRIBUTE_CHARS)
      throw new SitemapFormatError(
        'unreadable',
        `the attributes of an element are over ${MAX_ATTRIBUTE_CHARS} characters`,
      );
  }

  open(tag: SaxesTagNS): void {
    this.depth++;
    const inSitemapNs = tag.uri === SITEMAP_NS || tag.uri === '';
    if (this.depth === 1) {
      if (inSitemapNs && (tag.local === 'urlset' || tag.local === 'sitemapindex')) {
        this.kind = tag.local;
        return;
      }
      throw new SitemapFormatError(
        'not_a_sitemap',
        `root element <${tag.name}> is not urlset or sitemapindex`,
      );
    }
    const item = this.kind === 'urlset' ? 'url' : 'sitemap';
    if (this.depth === 2 && inSitemapNs && tag.local === item) {
      this.entry = { loc: '', tooLong: false, alternates: [] };
      return;
    }
    if (this.depth === 3 && this.entry) {
      if (inSitemapNs && (tag.local === 'loc' || tag.local === 'lastmod')) {
        this.field = tag.local;
        this.buffer = '';
        this.capture(true);
      } else if (tag.uri === XHTML_NS && tag.local === 'link' && this.kind === 'urlset') {
        const attr = (name: string) => tag.attributes[name]?.value;
        const rel = attr('rel');
        const hreflang = attr('hreflang');
        const href = attr('href');
        if (
          rel?.trim().toLowerCase() === 'alternate' &&
          hreflang &&
          href &&
          this.entry.alternates.length < MAX_ALTERNATES
        ) {
          this.entry.alternates.push({
            hreflang: hreflang.trim().slice(0, 35),
            href: href.trim().slice(0, MAX_LOC_LENGTH + 1),
          });
        }
      }
    }
  }

  text(text: string): void {
    if (!this.field || !this.entry) return;
    // Keep a bounded prefix: a hostile multi-megabyte <loc> is refused as too long, not stored.
    if (this.buffer.length <= MAX_LOC_LENGTH + 64) this.buffer += text.slice(0, MAX_LOC_LENGTH + 65);
    else if (this.field === 'loc') this.entry.tooLong = true;
  }

  close(): void {
    if (this.depth === 3 && this.field && this.entry) {
      const value = this.buffer.trim();
      if (this.field === 'loc') {
        this.entry.loc = value.slice(0, MAX_LOC_LENGTH + 1);
        if (value.length > MAX_LOC_LENGTH) this.entry.tooLong = true;
      } else this.entry.lastmod = value.slice(0, 64);
      this.field = undefined;
      this.buffer = '';
      this.capture(false);
    } else if (this.depth === 2 && this.entry) {
      this.entries.push(this.entry);
      this.entry = undefined;
    }
    this.depth--;
  }
}
