/**
 * What the import makes of one `<loc>`: refused (and why) or a page with its identity, type and
 * language hint (product.md "Page import").
 */

export const MAX_PAGE_URL_LENGTH = 2048;

export const REFUSAL_REASONS = [
  'not_a_valid_address',
  'contains_wildcard',
  'not_on_site',
  'too_long',
  'not_a_page',
] as const;
export type Refusal = (typeof REFUSAL_REASONS)[number];

export const PAGE_TYPES = ['home', 'product', 'category', 'article', 'info', 'search', 'other'] as const;
export type PageType = (typeof PAGE_TYPES)[number];

/** Files rather than pages: images, media, documents, archives, feeds, scripts, styles, fonts, XML. */
const FILE_EXTENSIONS = new Set(
  (
    'jpg jpeg png gif webp svg ico bmp tif tiff avif heic heif ' +
    'mp4 m4v mov avi mkv webm mpg mpeg wmv flv mp3 m4a wav ogg oga flac aac opus ' +
    'pdf doc docx xls xlsx ppt pptx odt ods odp rtf txt csv epub ' +
    'zip gz tgz tar rar 7z bz2 xz dmg exe apk ' +
    'rss atom ' +
    'js mjs cjs json map css ' +
    'woff woff2 ttf otf eot ' +
    'xml xsl xslt'
  ).split(' '),
);

/** ISO 639-1 language codes: the only two-letter segments and subdomains read as a language. */
const LANGUAGES = new Set(
  (
    'aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee el en eo es et eu ' +
    'fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko ' +
    'kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi ' +
    'pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ' +
    'ur uz ve vi vo wa wo xh yi yo za zh zu'
  ).split(' '),
);

export type LocVerdict = { ok: true; url: URL; identity: string } | { ok: false; reason: Refusal };

/**
 * Checks one `<loc>` against the site's hosts. Order: too_long, not_a_valid_address,
 * contains_wildcard, not_on_site, not_a_page. Identity: the WHATWG-parsed URL without fragment
 * (lowercase host, no default port).
 */
export function checkLoc(loc: string, tooLong: boolean, hosts: ReadonlySet<string>): LocVerdict {
  if (tooLong || loc.length > MAX_PAGE_URL_LENGTH) return { ok: false, reason: 'too_long' };
  // The URL parser silently drops tabs and newlines inside an address: refuse them instead.
  if (loc.length === 0 || /[\s\u0000-\u001f\u007f]/.test(loc))
    return { ok: false, reason: 'not_a_valid_address' };
  let url: URL;
  try {
    url = new URL(loc);
  } catch {
    return { ok: false, reason: 'not_a_valid_address' };
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    !/^https?:\/\//i.test(loc) ||
    url.username ||
    url.password ||
    !url.hostname
  ) {
    return { ok: false, reason: 'not_a_valid_address' };
  }
  if (loc.includes('*')) return { ok: false, reason: 'contains_wildcard' };
  if (!hosts.has(url.hostname)) return { ok: false, reason: 'not_on_site' };
  if (isFile(url)) return { ok: false, reason: 'not_a_page' };
  url.hash = '';
  const identity = url.href;
  if (identity.length > MAX_PAGE_URL_LENGTH) return { ok: false, reason: 'too_long' };
  return { ok: true, url, identity };
}

function isFile(url: URL): boolean {
  const last = url.pathname.split('/').pop() ?? '';
  const dot = last.lastIndexOf('.');
  return dot > 0 && FILE_EXTENSIONS.has(last.slice(dot + 1).toLowerCase());
}

/** Path segments, lowercased, without a leading language segment. */
function segments(url: URL): string[] {
  const parts = url.pathname
    .split('/')
    .filter(Boolean)
    .map((s) => safeDecode(s).toLowerCase());
  if (parts.length > 0 && pathLanguage(parts[0])) parts.shift();
  return parts;
}

const SEARCH = /^(search|recherche|suche|buscar|busqueda|cerca|ricerca|zoeken)$/;
const PRODUCT = /^(products?|produits?|produkte?|prodotti|prodotto|productos?|producten|item|items|p|dp)$/;
const PRODUCT_SLUG = /(^|[-_])(p|sku|prod)[-_]?\d+(\.html?)?$/;
const CATEGORY =
  /^(categor(y|ies)|categories|categorie|kategorie|categoria|collections?|c|shop|catalog|catalogue|department|departments|rayons?)$/;
const ARTICLE =
  /^(blog|blogs|news|articles?|magazine|journal|guides?|stories|posts?|actualites|actus?|ratgeber|tips)$/;
const INFO =
  /^(about|about-us|a-propos|contact|contact-us|faq|faqs|help|support|terms|terms-of-service|conditions|privacy|privacy-policy|legal|imprint|impressum|shipping|delivery|livraison|returns|retours|cgv|mentions-legales|cookies|stores|store-locator|careers|pages)$/;

/** The page type inferred from the URL (home, product, category, article, info, search, other). */
export function pageType(url: URL): PageType {
  const parts = segments(url);
  if (parts.length === 0) {
    return ['q', 'query', 's', 'search'].some((k) => url.searchParams.has(k)) ? 'search' : 'home';
  }
  if (parts.some((p) => SEARCH.test(p))) return 'search';
  if (parts.some((p) => PRODUCT.test(p)) || PRODUCT_SLUG.test(parts[parts.length - 1])) return 'product';
  if (parts.some((p) => CATEGORY.test(p))) return 'category';
  if (parts.some((p) => ARTICLE.test(p))) return 'article';
  if (parts.some((p) => INFO.test(p))) return 'info';
  return 'other';
}

/** `fr`, `en-gb`, `pt_BR` as a path segment → `fr`, `en-gb`, `pt-br`; else undefined. */
function pathLanguage(segment: string): string | undefined {
  const m = /^([a-z]{2})(?:[-_]([a-z]{2}))?$/i.exec(segment);
  if (!m || !LANGUAGES.has(m[1].toLowerCase())) return undefined;
  return m[2] ? `${m[1]}-${m[2]}`.toLowerCase() : m[1].toLowerCase();
}

/** A BCP 47-looking hreflang, lowercased; undefined for x-default and junk. */
export function normalizeHreflang(value: string): string | undefined {
  const v = value.trim().toLowerCase().replace(/_/g, '-');
  if (!/^[a-z]{2,3}(-[a-z0-9]{2,8}){0,3}$/.test(v)) return undefined;
  return v;
}

/**
 * The language hint of a page: its own hreflang alternate when the sitemap gives one, else a
 * language path segment (/fr/, /en-gb/), else a language subdomain (de.shop.example); undefined
 * ("none") otherwise.
 */
export function languageHint(url: URL, ownHreflang?: string): string | undefined {
  const fromHreflang = ownHreflang ? normalizeHreflang(ownHreflang) : undefined;
  if (fromHreflang) return fromHreflang;
  const first = url.pathname.split('/').filter(Boolean)[0];
  const fromPath = first ? pathLanguage(safeDecode(first)) : undefined;
  if (fromPath) return fromPath;
  const labels = url.hostname.split('.');
  if (labels.length >= 3 && labels[0].length === 2 && LANGUAGES.has(labels[0])) return labels[0];
  return undefined;
}

/** `YYYY-MM-DD` or a W3C datetime; anything else is ignored. */
export function parseLastmod(value: string | undefined): Date | null {
  if (!value) return null;
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(value)) return null;
  const date = new Date(value.length === 10 ? `${value}T00:00:00Z` : value);
  const time = date.getTime();
  if (Number.isNaN(time) || date.getUTCFullYear() < 1990 || date.getUTCFullYear() > 9999) return null;
  return date;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
