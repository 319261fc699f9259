import { beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { ConversationFilter, emptyFilter } from './listing/conversation-filter';
import { ConversationSearch, listWithPageAndCount, SearchPage } from './listing/conversation-search';
import { CircuitBreaker, FallbackConversationSearch } from './fallback-conversation-search';

const page = (id: string): SearchPage => ({
  items: [{ id, createdAt: '2026-11-20T10:00:00.000Z' }],
  hasMore: false,
});

class Engine implements ConversationSearch {
  calls = 0;
  failing = false;
  constructor(private readonly id: string) {}
  async page(): Promise<SearchPage> {
    this.calls++;
    if (this.failing) throw new Error('down');
    return page(this.id);
  }
  failingCount = false;
  async count() {
    this.calls++;
    if (this.failing || this.failingCount) throw new Error('down');
    return { value: this.id === 'conv_os' ? 1 : 2, capped: false };
  }
  list(siteId: string, filter: ConversationFilter, options: { limit: number; countCap?: number }) {
    return listWithPageAndCount(this, siteId, filter, options);
  }
}

describe('circuit breaker around the OpenSearch engine', () => {
  beforeAll(() => Logger.overrideLogger(false));

  const setup = () => {
    let now = 0;
    const primary = new Engine('conv_os');
    const fallback = new Engine('conv_pg');
    const breaker = new CircuitBreaker({ failureThreshold: 3, openMs: 1000, now: () => now });
    const search = new FallbackConversationSearch(primary, fallback, breaker);
    const list = () => search.page('site_x', emptyFilter(), { limit: 1 });
    return { primary, fallback, breaker, list, advance: (ms: number) => (now += ms) };
  };

  it('a failure is answered by the fallback; the circuit stays closed below the threshold', async () => {
    const s = setup();
    s.primary.failing = true;
    expect(await s.list()).toEqual(page('conv_pg'));
    expect(await s.list()).toEqual(page('conv_pg'));
    expect(s.breaker.state).toBe('closed');
    s.primary.failing = false;
    expect(await s.list()).toEqual(page('conv_os'));
  });

  it('threshold failures in a row open it: the primary is not called while open', async () => {
    const s = setup();
    s.primary.failing = true;
    for (let i = 0; i < 3; i++) await s.list();
    expect(s.breaker.state).toBe('open');
    const calls = s.primary.calls;
    expect(await s.list()).toEqual(page('conv_pg'));
    expect(s.primary.calls).toBe(calls);
  });

  it('after openMs one trial request goes to the primary: success closes the circuit', async () => {
    const s = setup();
    s.primary.failing = true;
    for (let i = 0; i < 3; i++) await s.list();
    s.advance(1000);
    expect(s.breaker.state).toBe('half-open');
    s.primary.failing = false;
    expect(await s.list()).toEqual(page('conv_os'));
    expect(s.breaker.state).toBe('closed');
  });

  it('a failed trial opens it again for openMs', async () => {
    const s = setup();
    s.primary.failing = true;
    for (let i = 0; i < 3; i++) await s.list();
    s.advance(1000);
    expect(await s.list()).toEqual(page('conv_pg'));
    expect(s.breaker.state).toBe('open');
    s.advance(999);
    expect(s.breaker.state).toBe('open');
    s.advance(1);
    expect(s.breaker.state).toBe('half-open');
  });

  it('while the trial is in flight, other requests use the fallback', () => {
    const s = setup();
    s.breaker.failure();
    s.breaker.failure();
    s.breaker.failure();
    s.advance(1000);
    expect(s.breaker.allow()).toBe(true);
    expect(s.breaker.allow()).toBe(false);
  });
});

describe('the page and its count come from the same engine', () => {
  beforeAll(() => Logger.overrideLogger(false));

  it('when OpenSearch answers the page but fails the count, Postgres answers both', async () => {
    const primary = new Engine('conv_os');
    const fallback = new Engine('conv_pg');
    const search = new FallbackConversationSearch(primary, fallback);
    primary.failingCount = true;
    expect(await search.list('site_x', emptyFilter(), { limit: 1, countCap: 10 })).toEqual({
      page: page('conv_pg'),
      count: { value: 2, capped: false },
    });
  });

  it('when OpenSearch answers both, both are OpenSearch answers; without countCap no count', async () => {
    const search = new FallbackConversationSearch(new Engine('conv_os'), new Engine('conv_pg'));
    expect(await search.list('site_x', emptyFilter(), { limit: 1, countCap: 10 })).toEqual({
      page: page('conv_os'),
      count: { value: 1, capped: false },
    });
    expect(await search.list('site_x', emptyFilter(), { limit: 1 })).toEqual({ page: page('conv_os') });
  });
});
