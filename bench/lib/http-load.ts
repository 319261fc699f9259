import autocannon from 'autocannon';
import { elapsedMs, summarize, Summary } from './stats';

export interface HttpTarget {
  baseUrl: string;
  apiKey: string;
}

export interface LoadResult {
  latency: Summary;
  /** Every response's latency (ms), to merge runs; not written to the results. */
  latencies: number[];
  requests: number;
  /** Completed requests per second over the run. */
  throughput: number;
  non2xx: number;
  errors: number;
}

/**
 * Sends `paths` (in turn, per connection) for `seconds` at a fixed number of connections and
 * reports every response's latency. Latencies come from autocannon's per-response timings (float
 * ms), not its integer-ms histogram, so sub-millisecond differences survive.
 */
export async function load(
  target: HttpTarget,
  paths: string[],
  options: { connections: number; seconds: number },
): Promise<LoadResult> {
  const latencies: number[] = [];
  let non2xx = 0;
  let done!: (result: autocannon.Result) => void;
  let failed!: (error: unknown) => void;
  const finished = new Promise<autocannon.Result>((resolve, reject) => {
    done = resolve;
    failed = reject;
  });
  const settings: autocannon.Options = {
    url: target.baseUrl,
    connections: options.connections,
    duration: options.seconds,
    headers: { authorization: `Bearer ${target.apiKey}` },
    requests: paths.map((path) => ({ method: 'GET' as const, path })),
    timeout: 30,
  };
  const instance = autocannon(settings, (error, result) => (error ? failed(error) : done(result)));
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    latencies.push(responseTime);
    if (statusCode < 200 || statusCode >= 300) non2xx += 1;
  });
  const result = await finished;
  if (latencies.length === 0)
    throw new Error(`no response from ${target.baseUrl}${paths[0]} (errors: ${result.errors})`);
  return {
    latency: summarize(latencies),
    latencies,
    requests: latencies.length,
    throughput: latencies.length / options.seconds,
    non2xx,
    errors: result.errors,
  };
}

export interface ListingBody {
  data: Array<{ id: string }>;
  meta: { nextCursor: string | null; count?: { value: number; capped: boolean } };
}

/** One GET, checked for 200; returns the body and its time. */
export async function getOnce(target: HttpTarget, path: string): Promise<{ body: ListingBody; ms: number }> {
  const start = process.hrtime.bigint();
  const res = await fetch(`${target.baseUrl}${path}`, {
    headers: { authorization: `Bearer ${target.apiKey}` },
  });
  const text = await res.text();
  const ms = elapsedMs(start);
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${text.slice(0, 500)}`);
  return { body: JSON.parse(text) as ListingBody, ms };
}

/**
 * A new site of the target's organization, named `name` at `origin` (a probe's own, so that the
 * benched site's data stays as set up); its id.
 */
export async function createSite(target: HttpTarget, name: string, origin: string): Promise<string> {
  const res = await fetch(`${target.baseUrl}/api/v1/sites`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, origin }),
  });
  if (res.status !== 201)
    throw new Error(`creating the site ${name} answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { data: { id: string } }).data.id;
}
