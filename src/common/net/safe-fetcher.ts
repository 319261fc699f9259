import { lookup as dnsLookup } from 'node:dns/promises';
import * as http from 'node:http';
import * as https from 'node:https';
import type { LookupFunction } from 'node:net';
import { AddressPolicy, connectionAllowed, hostAddress } from './address-guard';

/** Why a document could not be fetched (the fetch-side reasons of counts.documentsFailed). */
export type FetchFailure =
  | 'address_not_allowed'
  | 'not_on_site'
  | 'redirected_off_site'
  | 'too_many_redirects'
  | 'not_found'
  | 'http_error'
  | 'timed_out'
  | 'unreachable';

/** Resolves a host name to every address it has (A and AAAA). Tests may pass their own. */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

export interface FetcherSettings extends AddressPolicy {
  requestTimeoutMs: number;
  maxRedirects: number;
}

export interface FetchRequest {
  url: URL;
  /** Whether a host is on the site: redirects elsewhere fail redirected_off_site. */
  isOnSite(hostname: string): boolean;
  /** Deadline of the whole import (epoch ms): the request stops there too. */
  deadline?: number;
}

export type FetchResult<T> =
  | { ok: true; value: T; url: URL }
  | {
      ok: false;
      failure: FetchFailure;
      url: URL;
      /** The import's own deadline, not the request's, ran out. */ importDeadline?: boolean;
    };

const USER_AGENT = 'ShoppingAnalyticsPageImport/1.0 (+sitemap import)';

interface OutgoingRequest {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string | Buffer;
}

const GET: OutgoingRequest = {
  method: 'GET',
  headers: {
    'user-agent': USER_AGENT,
    accept: 'application/xml, text/xml;q=0.9, */*;q=0.1',
    'accept-encoding': 'identity',
  },
};

/** A POST made by SafeFetcher#send (a webhook delivery). */
export interface SendRequest {
  url: URL;
  headers: Record<string, string>;
  body: string;
  /** Bytes of the response body read at most; the rest is never read. */
  maxBodyBytes: number;
}

/** Why a POST got no answer. */
export type SendFailure = 'address_not_allowed' | 'timed_out' | 'unreachable' | 'tls_error';

/** The answer of a POST (any status: redirects are answers, not followed), or why there is none. */
export type SendResult = { ok: true; status: number; body: string } | { ok: false; failure: SendFailure };

class Timeout extends Error {}
class Refused extends Error {
  constructor(readonly failure: FetchFailure) {
    super(failure);
  }
}

/** Why SafeFetcher#target refuses a connection: a subset of both FetchFailure and SendFailure. */
type TargetFailure = 'address_not_allowed' | 'unreachable';
class TargetRefused extends Refused {
  constructor(override readonly failure: TargetFailure) {
    super(failure);
  }
}

/** Where a request may connect: the port and the checked addresses it is pinned to. */
interface Target {
  port: number;
  addresses: string[];
  /** The URL's host is an address literal (no name to resolve, no TLS server name). */
  literal: boolean;
}

/**
 * Fetches documents from addresses customers control, safely:
 * - only http and https; port 80 or 443 (the test-only loopback setting aside);
 * - the host is resolved here and EVERY address it resolves to must be public (address-guard);
 *   the connection is then pinned to those checked addresses (custom `lookup`, no shared agent),
 *   so a second DNS answer cannot swap in another address (DNS rebinding);
 * - redirects are followed by hand, each hop checked again (scheme, host on the site, addresses);
 * - the request timeout bounds the time spent waiting on the network (name lookup, connecting,
 *   the response head, each body chunk), summed over the request; the import's deadline bounds
 *   everything.
 * `consume` reads the body; its errors propagate unless a timeout caused them.
 */
export class SafeFetcher {
  constructor(
    private readonly settings: FetcherSettings,
    private readonly resolve: Resolver = systemResolver,
  ) {}

  async fetch<T>(
    request: FetchRequest,
    consume: (body: AsyncIterable<Buffer>, url: URL) => Promise<T>,
  ): Promise<FetchResult<T>> {
    let current: { req?: http.ClientRequest; res?: http.IncomingMessage } = {};
    let timedOut = false;
    let byImport = false;
    let expire: (error: Timeout) => void = () => undefined;
    // Rejects when time runs out: a name lookup that hangs cannot outlive the request.
    const expired = new Promise<never>((_, reject) => {
      expire = reject;
    });
    expired.catch(() => undefined);
    const stop = (importDeadline: boolean) => {
      if (timedOut) return;
      timedOut = true;
      byImport = importDeadline;
      const error = new Timeout('deadline');
      expire(error);
      current.req?.destroy(error);
      current.res?.destroy(error);
    };
    // The request's own time counts only while we wait on the network, never while the consumer
    // works on what arrived (writing pages): a large sitemap is not cut short by our own writes.
    const clock = new NetworkClock(this.settings.requestTimeoutMs, () => stop(false));
    const importTimer =
      request.deadline !== undefined
        ? setTimeout(() => stop(true), Math.max(0, request.deadline - Date.now()))
        : undefined;
    clock.start();

    let url = request.url;
    let consuming = false;
    try {
      for (let redirects = 0; ; redirects++) {
        if (timedOut) throw new Timeout('deadline');
        if (url.protocol !== 'http:' && url.protocol !== 'https:')
          throw new Refused(redirects > 0 ? 'redirected_off_site' : 'address_not_allowed');
        if (!request.isOnSite(url.hostname))
          throw new Refused(redirects > 0 ? 'redirected_off_site' : 'not_on_site');
        if (url.username || url.password) throw new Refused('address_not_allowed');

        const target = await this.target(url, expired, () => timedOut);
        const res = await this.request(url, target, current, GET);
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && status !== 304) {
          const location = res.headers.location;
          res.destroy();
          if (!location) throw new Refused('http_error');
          if (redirects >= this.settings.maxRedirects) throw new Refused('too_many_redirects');
          let next: URL;
          try {
            next = new URL(location, url);
          } catch {
            throw new Refused('http_error');
          }
          next.hash = '';
          url = next;
          continue;
        }
        if (status === 404 || status === 410) {
          res.destroy();
          throw new Refused('not_found');
        }
        if (status < 200 || status >= 300) {
          res.destroy();
          throw new Refused('http_error');
        }
        try {
          consuming = true;
          clock.stop();
          const value = await consume(metered(res, clock), url);
          return { ok: true, value, url };
        } finally {
          res.destroy();
        }
      }
    } catch (error) {
      if (error instanceof Refused) return { ok: false, failure: error.failure, url };
      if (timedOut || error instanceof Timeout)
        return { ok: false, failure: 'timed_out', url, importDeadline: byImport };
      // Before the body is handed over, any failure is the connection's; after, only network errors are.
      if (!consuming || isNetworkError(error)) return { ok: false, failure: 'unreachable', url };
      throw error;
    } finally {
      clock.stop();
      clearTimeout(importTimer);
      current.req?.destroy();
      current.res?.destroy();
      current = {};
    }
  }

  /**
   * One POST of `body` to `url` through the same guard, for webhook deliveries: the host's
   * every address checked and the connection pinned to them, redirects NOT followed (a 3xx is
   * the answer), at most `maxBodyBytes` of the response read, and `requestTimeoutMs` bounding
   * the whole exchange (lookup, connect, sending, the response head and the bytes read).
   * Never throws: every failure is a SendResult.
   */
  async send(request: SendRequest): Promise<SendResult> {
    const { url } = request;
    let current: { req?: http.ClientRequest; res?: http.IncomingMessage } = {};
    let timedOut = false;
    let expire: (error: Timeout) => void = () => undefined;
    const expired = new Promise<never>((_, reject) => {
      expire = reject;
    });
    expired.catch(() => undefined);
    const timer = setTimeout(() => {
      timedOut = true;
      const error = new Timeout('deadline');
      expire(error);
      current.req?.destroy(error);
      current.res?.destroy(error);
    }, this.settings.requestTimeoutMs);
    try {
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        return { ok: false, failure: 'address_not_allowed' };
      if (url.username || url.password) return { ok: false, failure: 'address_not_allowed' };
      const target = await this.target(url, expired, () => timedOut);
      const res = await Promise.race([
        this.request(url, target, current, {
          method: 'POST',
          headers: request.headers,
          body: request.body,
        }),
        expired,
      ]);
      const status = res.statusCode ?? 0;
      let bodyText = '';
      let read = 0;
      for await (const chunk of res as AsyncIterable<Buffer>) {
        const room = request.maxBodyBytes - read;
        bodyText += chunk.subarray(0, room).toString('utf8');
        read += Math.min(chunk.length, room);
        if (read >= request.maxBodyBytes) break;
      }
      return { ok: true, status, body: bodyText };
    } catch (error) {
      if (timedOut || error instanceof Timeout) return { ok: false, failure: 'timed_out' };
      if (error instanceof TargetRefused) return { ok: false, failure: error.failure };
      return { ok: false, failure: isTlsError(error) ? 'tls_error' : 'unreachable' };
    } finally {
      clearTimeout(timer);
      current.req?.destroy();
      current.res?.destroy();
      current = {};
    }
  }

  /**
   * The target of `url`: its host resolved here (a literal address as is) and EVERY address
   * allowed for the port. TargetRefused otherwise; Timeout when `expired` fires during the lookup.
   */
  private async target(url: URL, expired: Promise<never>, timedOut: () => boolean): Promise<Target> {
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    const literal = hostAddress(url.hostname);
    let addresses: string[];
    if (literal) addresses = [literal];
    else {
      try {
        addresses = await Promise.race([this.resolve(url.hostname), expired]);
      } catch {
        if (timedOut()) throw new Timeout('deadline');
        throw new TargetRefused('unreachable');
      }
    }
    if (!connectionAllowed(addresses, port, this.settings)) throw new TargetRefused('address_not_allowed');
    return { port, addresses, literal: literal !== undefined };
  }

  /** One request to the checked addresses only; resolves with the response head. */
  private request(
    url: URL,
    { port, addresses, literal }: Target,
    current: { req?: http.ClientRequest; res?: http.IncomingMessage },
    what: OutgoingRequest,
  ): Promise<http.IncomingMessage> {
    const pinned: LookupFunction = (_hostname, options, callback) => {
      const entries = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
      if ((options as { all?: boolean }).all)
        (callback as (e: null, a: typeof entries) => void)(null, entries);
      else callback(null, entries[0].address, entries[0].family);
    };
    const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const options: https.RequestOptions = {
      method: what.method,
      hostname,
      port,
      path: `${url.pathname}${url.search}`,
      headers: what.headers,
      // No shared agent: a pooled socket could belong to another (unchecked) resolution.
      agent: false,
      lookup: pinned,
      ...(url.protocol === 'https:' && !literal ? { servername: hostname } : {}),
    };
    return new Promise((resolve, reject) => {
      const req = (url.protocol === 'https:' ? https : http).request(options, (res) => {
        current.res = res;
        resolve(res);
      });
      current.req = req;
      req.on('error', reject);
      req.end(what.body);
    });
  }
}

/** A budget of waiting time: runs only between start() and stop(), calls onExpired when spent. */
class NetworkClock {
  private remaining: number;
  private since?: number;
  private timer?: NodeJS.Timeout;

  constructor(
    budgetMs: number,
    private readonly onExpired: () => void,
  ) {
    this.remaining = budgetMs;
  }

  start(): void {
    if (this.since !== undefined) return;
    this.since = Date.now();
    this.timer = setTimeout(this.onExpired, Math.max(0, this.remaining));
  }

  stop(): void {
    if (this.since === undefined) return;
    clearTimeout(this.timer);
    this.remaining -= Date.now() - this.since;
    this.since = undefined;
  }
}

/** The response body, with the clock running only while the reader waits for the next chunk. */
async function* metered(res: http.IncomingMessage, clock: NetworkClock): AsyncGenerator<Buffer> {
  const chunks = res[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  for (;;) {
    clock.start();
    let next: IteratorResult<Buffer>;
    try {
      next = await chunks.next();
    } finally {
      clock.stop();
    }
    if (next.done) return;
    yield next.value;
  }
}

function isTlsError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return (
    typeof code === 'string' &&
    (code.startsWith('ERR_TLS') ||
      code.startsWith('ERR_SSL') ||
      code.includes('CERT') ||
      code === 'DEPTH_ZERO_SELF_SIGNED_CERT' ||
      code === 'SELF_SIGNED_CERT_IN_CHAIN')
  );
}

function isNetworkError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (typeof code !== 'string') return false;
  if (code.startsWith('ERR_'))
    return code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || code === 'ERR_STREAM_PREMATURE_CLOSE';
  // System errors (ECONNREFUSED, ECONNRESET, EHOSTUNREACH, ENOTFOUND, EAI_AGAIN, …) and HTTP parse errors.
  return /^E[A-Z0-9_]+$/.test(code) || code.startsWith('HPE_');
}
