import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SitemapServer } from '../../../test/fixtures/sitemap-server';
import { FetcherSettings, Resolver, SafeFetcher } from './safe-fetcher';

/** SafeFetcher#send: the webhook POST through the same guard as the page importer. */
describe('safe sending (webhook POSTs)', () => {
  let server: SitemapServer;
  const loose: FetcherSettings = { allowLoopback: true, requestTimeoutMs: 500, maxRedirects: 0 };
  const strict: FetcherSettings = { ...loose, allowLoopback: false };
  let received: string[] = [];
  const post = (path: string, settings = loose, resolver?: Resolver, host = '127.0.0.1') =>
    new SafeFetcher(settings, resolver).send({
      url: new URL(server.url(path, host)),
      headers: { 'content-type': 'application/json', 'webhook-id': 'evt_1' },
      body: '{"a":1}',
      maxBodyBytes: 1024,
    });

  beforeAll(async () => {
    server = await new SitemapServer().start();
    server.route('/ok', (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push(`${req.method} ${req.headers['webhook-id']} ${body}`);
        res.writeHead(201, { 'content-type': 'text/plain' });
        res.end('thanks');
      });
    });
    server.redirect('/moved', '/ok', 307);
    server.route('/hang', () => undefined);
    server.route('/huge', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('y'.repeat(1_000_000));
    });
  });
  afterAll(() => server.stop());

  it('POSTs the body and headers and answers the status and the start of the body', async () => {
    received = [];
    expect(await post('/ok')).toEqual({ ok: true, status: 201, body: 'thanks' });
    expect(received).toEqual(['POST evt_1 {"a":1}']);
  });

  it('does not follow a redirect: the 3xx is the answer, its Location never requested', async () => {
    received = [];
    expect(await post('/moved')).toMatchObject({ ok: true, status: 307 });
    expect(received).toEqual([]);
  });

  it('reads at most maxBodyBytes of the answer', async () => {
    const result = await post('/huge');
    expect(result).toMatchObject({ ok: true, status: 200 });
    expect((result as { body: string }).body).toHaveLength(1024);
  });

  it('gives up after the request timeout (timed_out)', async () => {
    const started = Date.now();
    expect(await post('/hang')).toEqual({ ok: false, failure: 'timed_out' });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('refuses a name resolving to 127.0.0.1 without the test-only loopback setting, never connecting', async () => {
    received = [];
    const resolver: Resolver = async () => ['127.0.0.1'];
    expect(await post('/ok', strict, resolver, 'hooks.example.test')).toEqual({
      ok: false,
      failure: 'address_not_allowed',
    });
    expect(received).toEqual([]);
  });

  it('connects to the checked address only (pinned): the name is resolved once, by the guard', async () => {
    received = [];
    const asked: string[] = [];
    const resolver: Resolver = async (name) => {
      asked.push(name);
      return ['127.0.0.1'];
    };
    expect(await post('/ok', loose, resolver, 'rebind.invalid')).toMatchObject({ ok: true, status: 201 });
    expect(asked).toEqual(['rebind.invalid']);
  });

  it('answers unreachable when nothing listens', async () => {
    const fetcher = new SafeFetcher(loose);
    const result = await fetcher.send({
      url: new URL('http://127.0.0.1:1/'),
      headers: {},
      body: '',
      maxBodyBytes: 1024,
    });
    expect(result).toEqual({ ok: false, failure: 'unreachable' });
  });
});
