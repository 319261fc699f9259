import { afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
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
  /** When set, page() waits for it (a request in flight). */
  pending?: Promise<void>;
  constructor(private readonly id: string) {}
  async page(): Promise<SearchPage> {
    this.calls++;
    if (this.pending) await this.pending;
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
  // Only the clock is faked (the breaker reads Date.now()); promises and timers run as usual.
  beforeEach(() => {
    jest.useFakeTimers({
      now: 0,
      doNotFake: [
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ],
    });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  const setup = () => {
    const primary = new Engine('conv_os');
    const fallback = new Engine('conv_pg');
    const breaker = new CircuitBreaker({ failureThreshold: 3, openMs: 1000 });
    const search = new FallbackConversationSearch(primary, fallback, breaker);
    const list = () => search.page('site_x', emptyFilter(), { limit: 1 });
    const advance = (ms: number) => jest.setSystemTime(Date.now() + ms);
    /** Opens the circuit (threshold failures in a row) and waits openMs: the next request is the trial. */
    const halfOpen = async () => {
      primary.failing = true;
      for (let i = 0; i < 3; i++) await list();
      advance(1000);
    };
    return { primary, fallback, breaker, list, advance, halfOpen };
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
    await s.halfOpen();
    expect(s.breaker.state).toBe('half-open');
    s.primary.failing = false;
    expect(await s.list()).toEqual(page('conv_os'));
    expect(s.breaker.state).toBe('closed');
  });

  it('a failed trial opens it again for openMs', async () => {
    const s = setup();
    await s.halfOpen();
    expect(await s.list()).toEqual(page('conv_pg'));
    expect(s.breaker.state).toBe('open');
    s.advance(999);
    expect(s.breaker.state).toBe('open');
    s.advance(1);
    expect(s.breaker.state).toBe('half-open');
  });

  it('while the trial is in flight, other requests use the fallback', async () => {
    const s = setup();
    await s.halfOpen();
    s.primary.failing = false;
    let answer!: () => void;
    s.primary.pending = new Promise<void>((resolve) => (answer = resolve));
    const calls = s.primary.calls;
    const trial = s.list();
    expect(s.primary.calls).toBe(calls + 1);
    // Answered by the fallback at once, not after the trial: the primary is not called again.
    expect(await s.list()).toEqual(page('conv_pg'));
    expect(s.primary.calls).toBe(calls + 1);
    answer();
    expect(await trial).toEqual(page('conv_os'));
    expect(s.breaker.state).toBe('closed');
  });

  it('a failure while closed but below the threshold does not count once a success came between', async () => {
    const s = setup();
    s.primary.failing = true;
    await s.list();
    await s.list();
    s.primary.failing = false;
    await s.list();
    s.primary.failing = true;
    await s.list();
    await s.list();
    expect(s.breaker.state).toBe('closed');
    await s.list();
    expect(s.breaker.state).toBe('open');
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
