import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { SitemapServer } from '../../../test/fixtures/sitemap-server';
import { FetcherSettings, Resolver, SafeFetcher } from './safe-fetcher';

const readText = async (body: AsyncIterable<Buffer>) => {
  let text = '';
  for await (const chunk of body) text += chunk.toString();
  return text;
};

const anyHost = { isOnSite: () => true };

describe('safe fetching', () => {
  let server: SitemapServer;
  const loose: FetcherSettings = { allowLoopback: true, requestTimeoutMs: 500, maxRedirects: 5 };
  /** Reads a path of the fixture server as text, loopback allowed and every host on the site. */
  const fetchText = (path: string) =>
    new SafeFetcher(loose).fetch({ url: new URL(server.url(path)), ...anyHost }, readText);
  const strict: FetcherSettings = { allowLoopback: false, requestTimeoutMs: 500, maxRedirects: 5 };

  beforeAll(async () => {
    server = await new SitemapServer().start();
    server.serve('/ok', 'hello', { type: 'text/plain' });
    server.serve('/gone', 'gone', { status: 410 });
    server.serve('/boom', 'boom', { status: 500 });
    server.serve('/teapot', 'no', { status: 418 });
    for (let i = 0; i < 8; i++) server.redirect(`/r${i}`, `/r${i + 1}`, i % 2 ? 302 : 301);
    server.serve('/r8', 'end of chain', { type: 'text/plain' });
    server.redirect('/loop-a', '/loop-b');
    server.redirect('/loop-b', '/loop-a');
    server.redirect('/to-private', 'http://10.0.0.1/sitemap.xml');
    server.redirect('/to-metadata', 'http://169.254.169.254/latest/meta-data/');
    server.redirect('/to-localhost-name', `http://localhost:${server.port}/ok`);
    server.redirect('/to-ftp', 'ftp://127.0.0.1/sitemap.xml');
    server.redirect('/no-location', '');
    server.route('/hang', () => undefined);
    server.route('/three-parts', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('one,');
      setTimeout(() => res.write('two,'), 20);
      setTimeout(() => res.end('three'), 40);
    });
    server.route('/drip', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(timer));
    });
  });
  afterAll(() => server.stop());

  it('reads a document from an allowed address', async () => {
    const result = await fetchText('/ok');
    expect(result).toMatchObject({ ok: true, value: 'hello' });
  });

  describe('address_not_allowed: loopback, private, metadata or a port other than 80/443, with no connection made', () => {
    it('refuses a loopback address under the default (strict) setting without connecting', async () => {
      const before = server.hits.length;
      const result = await new SafeFetcher(strict).fetch(
        { url: new URL(server.url('/ok')), ...anyHost },
        readText,
      );
      expect(result).toMatchObject({ ok: false, failure: 'address_not_allowed' });
      expect(server.hits.length).toBe(before);
    });

    it('refuses a name that resolves to loopback (localhost) under the strict setting without connecting', async () => {
      const before = server.hits.length;
      const result = await new SafeFetcher(strict).fetch(
        { url: new URL(server.url('/ok', 'localhost')), ...anyHost },
        readText,
      );
      expect(result).toMatchObject({ ok: false, failure: 'address_not_allowed' });
      expect(server.hits.length).toBe(before);
    });

    it('refuses a name when any one of its addresses is private', async () => {
      const resolver: Resolver = async () => ['93.184.215.14', '10.1.2.3'];
      const result = await new SafeFetcher(strict, resolver).fetch(
        { url: new URL('https://mixed.example/sitemap.xml'), ...anyHost },
        readText,
      );
      expect(result).toMatchObject({ ok: false, failure: 'address_not_allowed' });
    });

    it.each([
      'http://127.1/',
      'http://0x7f.1/',
      'http://2130706433/',
      'http://017700000001/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::1]/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/',
      'http://100.64.0.1/',
      'http://0.0.0.0/',
      'http://[64:ff9b::a00:1]/',
      'http://[2002:a00:1::]/',
    ])('refuses %s', async (address) => {
      const result = await new SafeFetcher(strict).fetch({ url: new URL(address), ...anyHost }, readText);
      expect(result).toMatchObject({ ok: false, failure: 'address_not_allowed' });
    });

    it('refuses a public address on a port other than 80/443', async () => {
      const resolver: Resolver = async () => {
        throw new Error('must not be asked');
      };
      const result = await new SafeFetcher(strict, resolver).fetch(
        { url: new URL('http://93.184.215.14:8080/sitemap.xml'), ...anyHost },
        readText,
      );
      expect(result).toMatchObject({ ok: false, failure: 'address_not_allowed' });
    });

    it('checks every redirect hop: a redirect to a private address is refused', async () => {
      const result = await fetchText('/to-private');
      expect(result).toMatchObject({ ok: false, failure: 'address_not_allowed' });
      expect(result.url.href).toBe('http://10.0.0.1/sitemap.xml');
    });

    it('checks every redirect hop: a redirect to the metadata address is refused', async () => {
      const result = await fetchText('/to-metadata');
      expect(result).toMatchObject({ ok: false, failure: 'address_not_allowed' });
    });
  });

  it('connects to the address it checked, never resolving the name a second time (DNS rebinding)', async () => {
    // "rebind.invalid" does not exist in DNS: the only way to reach the server is the checked, pinned address.
    const asked: string[] = [];
    const resolver: Resolver = async (name) => {
      asked.push(name);
      return ['127.0.0.1'];
    };
    const result = await new SafeFetcher(loose, resolver).fetch(
      { url: new URL(`http://rebind.invalid:${server.port}/ok`), ...anyHost },
      readText,
    );
    expect(result).toMatchObject({ ok: true, value: 'hello' });
    expect(asked).toEqual(['rebind.invalid']);
  });

  it('redirected_off_site: a redirect to a host not on the site', async () => {
    const onSite = { isOnSite: (host: string) => host === '127.0.0.1' };
    const result = await new SafeFetcher(loose).fetch(
      { url: new URL(server.url('/to-localhost-name')), ...onSite },
      readText,
    );
    expect(result).toMatchObject({ ok: false, failure: 'redirected_off_site' });
  });

  it('not_on_site: the first address is not on the site (no request made)', async () => {
    const before = server.hits.length;
    const result = await new SafeFetcher(loose).fetch(
      { url: new URL(server.url('/ok')), isOnSite: () => false },
      readText,
    );
    expect(result).toMatchObject({ ok: false, failure: 'not_on_site' });
    expect(server.hits.length).toBe(before);
  });

  it('follows 5 redirects (too_many_redirects past them)', async () => {
    const result = await fetchText('/r3');
    expect(result).toMatchObject({ ok: true, value: 'end of chain' });
  });

  it.each([
    ['/to-ftp', 'redirected_off_site'], // a redirect to a scheme other than http(s)
    ['/r2', 'too_many_redirects'], // a sixth redirect
    ['/loop-a', 'too_many_redirects'], // a redirect loop
    ['/missing', 'not_found'],
    ['/gone', 'not_found'],
    ['/boom', 'http_error'],
    ['/teapot', 'http_error'],
    ['/no-location', 'http_error'],
    ['/hang', 'timed_out'], // a server that never answers
    ['/drip', 'timed_out'], // a body that trickles past the request deadline
  ])('%s fails %s', async (path, failure) => {
    const result = await fetchText(path);
    expect(result).toMatchObject({ ok: false, failure });
  });

  describe("the request timeout measures the network only (time waiting for bytes), not the reader's own work", () => {
    it('reads a document whose reader works longer than the request timeout', async () => {
      const slowReader = async (body: AsyncIterable<Buffer>) => {
        let text = '';
        for await (const chunk of body) {
          text += chunk.toString();
          await new Promise((resolve) => setTimeout(resolve, 300)); // 3 × 300 ms > the 500 ms timeout
        }
        return text;
      };
      const result = await new SafeFetcher(loose).fetch(
        { url: new URL(server.url('/three-parts')), ...anyHost },
        slowReader,
      );
      expect(result).toMatchObject({ ok: true, value: 'one,two,three' });
    });

    it('still times out when the waits for bytes add up past the timeout (a slow drip)', async () => {
      const started = Date.now();
      const result = await fetchText('/drip');
      expect(result).toMatchObject({ ok: false, failure: 'timed_out' });
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it("stops at the import's deadline whatever the reader does, and says so", async () => {
      const result = await new SafeFetcher({ ...loose, requestTimeoutMs: 60_000 }).fetch(
        { url: new URL(server.url('/hang')), ...anyHost, deadline: Date.now() + 300 },
        readText,
      );
      expect(result).toMatchObject({ ok: false, failure: 'timed_out', importDeadline: true });
    });
  });

  it('timed_out: a name lookup that never answers', async () => {
    const resolver: Resolver = () => new Promise(() => undefined);
    const result = await new SafeFetcher(loose, resolver).fetch(
      { url: new URL('https://slow-dns.example/sitemap.xml'), ...anyHost },
      readText,
    );
    expect(result).toMatchObject({ ok: false, failure: 'timed_out' });
  });

  it('unreachable: nothing listens on the port', async () => {
    const closed = await new SitemapServer().start();
    const url = closed.url('/sitemap.xml');
    await closed.stop();
    const result = await new SafeFetcher(loose).fetch({ url: new URL(url), ...anyHost }, readText);
    expect(result).toMatchObject({ ok: false, failure: 'unreachable' });
  });

  it.each([
    ['not HTTP at all', 'SSH-2.0-OpenSSH_9.6\r\n'],
    ['headers over the size limit', `HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`],
  ])('unreachable: a server answering %s', async (_label, answer) => {
    const sockets = new Set<import('node:net').Socket>();
    const tcp = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.end(answer);
    });
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    try {
      const port = (tcp.address() as AddressInfo).port;
      const result = await new SafeFetcher(loose).fetch(
        { url: new URL(`http://127.0.0.1:${port}/sitemap.xml`), ...anyHost },
        readText,
      );
      expect(result).toMatchObject({ ok: false, failure: 'unreachable' });
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => tcp.close(resolve));
    }
  });

  it('unreachable: the name does not resolve', async () => {
    const result = await new SafeFetcher(loose).fetch(
      { url: new URL('https://no-such-host.invalid/sitemap.xml'), ...anyHost },
      readText,
    );
    expect(result).toMatchObject({ ok: false, failure: 'unreachable' });
  });
});
