import { afterEach } from '@jest/globals';
import { SitemapServer } from '../fixtures/sitemap-server';

/**
 * Loopback sitemap servers for the tests of one `describe`: call it in the describe's body; the
 * function it returns starts a server, and every server started is stopped after each test.
 */
export function sitemapServersPerTest(): () => Promise<SitemapServer> {
  const servers: SitemapServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });
  return async () => {
    const server = await new SitemapServer().start();
    servers.push(server);
    return server;
  };
}
