/**
 * Sanitises the page address a site's tag declares (contract: conversation fields, rules 1-3):
 * 1. only scheme, origin and path are kept: the query string, the fragment and `;` path
 *    parameters are removed (user info in the authority is dropped too: it is not part of an origin);
 * 2. an address whose scheme is not http or https (javascript:, mailto:, data:, a relative
 *    address, anything unparsable) gives null;
 * 3. the path is otherwise kept as sent (no decoding, re-encoding or dot-segment resolution).
 * The origin is the URL standard's: lowercase scheme and host, default port omitted. An empty
 * path becomes `/`.
 */
export function sanitizePageUrl(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  // The URL standard ignores leading/trailing C0 controls and spaces, and tabs/newlines anywhere.
  const input = raw.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '');
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(input);
  if (!scheme || !['http', 'https'].includes(scheme[1].toLowerCase())) return null;
  const rest = input.slice(scheme[0].length);
  if (!/^[/\\]{2}/.test(rest)) return null;
  const afterSlashes = rest.slice(2);
  const authorityEnd = afterSlashes.search(/[/\\?#]/);
  const authority = authorityEnd === -1 ? afterSlashes : afterSlashes.slice(0, authorityEnd);
  const tail = authorityEnd === -1 ? '' : afterSlashes.slice(authorityEnd);
  let origin: string;
  try {
    const url = new URL(`${scheme[1].toLowerCase()}://${authority}/`);
    if (!url.hostname) return null;
    origin = url.origin;
  } catch {
    return null;
  }
  const pathEnd = tail.search(/[?#]/);
  const path = (pathEnd === -1 ? tail : tail.slice(0, pathEnd))
    .split('/')
    .map((segment) => {
      const semicolon = segment.indexOf(';');
      return semicolon === -1 ? segment : segment.slice(0, semicolon);
    })
    .join('/');
  return `${origin}${path.startsWith('/') ? path : `/${path}`}`;
}
