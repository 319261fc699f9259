/** Rules on a site's origin and alias hosts, shared by validation, the site service and the page importer. */

/** `scheme://host[:port]` of an absolute http(s) address with no path, query, fragment or credentials; else undefined. */
export function normalizeOrigin(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== ''))
    return undefined;
  if (value.includes('?') || value.includes('#')) return undefined;
  return url.origin;
}

const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** A host name (lowercase, IDN in punycode form); undefined when it is not one. */
export function normalizeHost(value: string): string | undefined {
  const host = value.trim().toLowerCase().replace(/\.$/, '');
  if (host.length === 0 || host.length > 253) return undefined;
  let parsed: string;
  try {
    parsed = new URL(`http://${host}`).hostname;
  } catch {
    return undefined;
  }
  if (parsed !== host) return undefined;
  return host.split('.').every((label) => HOST_LABEL.test(label)) ? host : undefined;
}

/** The `www.` twin of a host: an alias of every site by default. */
export function wwwTwin(host: string): string {
  return host.startsWith('www.') ? host.slice(4) : `www.${host}`;
}

/** Every host that is "on the site": the origin's host, its www. twin, and the declared aliases. */
export function siteHosts(site: { origin: string; aliases: readonly string[] }): Set<string> {
  const host = new URL(site.origin).hostname;
  return new Set([host, wwwTwin(host), ...site.aliases.flatMap((alias) => [alias])]);
}
