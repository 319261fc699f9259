import { afterAll, afterEach, beforeAll } from '@jest/globals';
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

/**
 * One loopback sitemap server for the tests of a `describe`, started before them and stopped
 * after them; `use` receives it (to set the describe's `server`).
 */
export function sitemapServerPerSuite(use: (server: SitemapServer) => void): void {
  let server: SitemapServer | undefined;
  beforeAll(async () => {
    server = await new SitemapServer().start();
    use(server);
  });
  afterAll(async () => {
    await server?.stop();
  });
}
