import { SafeFetcher } from '../common/net/safe-fetcher';

/** robots.txt is read up to this many bytes (as search engines do). */
export const MAX_ROBOTS_BYTES = 512 * 1024;

export interface RobotsSitemaps {
  /** `Sitemap:` addresses on the site, once each, in the order listed. */
  onSite: URL[];
  /** `Sitemap:` lines naming another host (counted as not_on_site, never fetched). */
  offSite: number;
  /** Bytes of robots.txt read. */
  bytes: number;
}

/**
 * The `Sitemap:` lines of a site's /robots.txt, fetched with the same safe fetcher as sitemaps.
 * A robots.txt that cannot be fetched simply lists nothing.
 */
export async function readRobotsSitemaps(
  fetcher: SafeFetcher,
  origin: string,
  isOnSite: (host: string) => boolean,
  deadline: number,
): Promise<RobotsSitemaps> {
  const robots = new URL('/robots.txt', origin);
  const result = await fetcher
    .fetch({ url: robots, isOnSite, deadline }, async (body) => {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of body) {
        const remaining = MAX_ROBOTS_BYTES - size;
        chunks.push(chunk.subarray(0, remaining));
        size += Math.min(chunk.length, remaining);
        if (size >= MAX_ROBOTS_BYTES) break;
      }
      return { text: Buffer.concat(chunks).toString('utf8'), size };
    })
    .catch(() => undefined);
  if (!result || !result.ok) return { onSite: [], offSite: 0, bytes: 0 };
  return { ...sitemapLines(result.value.text, isOnSite), bytes: result.value.size };
}

/** The http(s) addresses of `Sitemap:` lines, split into those on the site and a count of the others. */
export function sitemapLines(
  text: string,
  isOnSite: (host: string) => boolean,
): { onSite: URL[]; offSite: number } {
  const onSite: URL[] = [];
  let offSite = 0;
  const seen = new Set<string>();
  for (const line of text.split(/\r\n|\r|\n/)) {
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
    if (!isOnSite(url.hostname)) {
      offSite++;
      continue;
    }
    onSite.push(url);
  }
  return { onSite, offSite };
}
