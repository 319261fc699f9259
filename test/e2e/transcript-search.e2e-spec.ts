import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getStats, listConversations, recordConversation } from '../factories/conversations';
import { createExport, downloadedRecords, finishedExport, postExport } from '../factories/exports';
import { createOrganization, Org } from '../factories/organizations';
import { QueryValues } from '../factories/query-string';
import { exportingAppPerSuite, postgresAppPerSuite } from '../setup/app-per-suite';
import { createTestApp, OWN_BUDGET, TestApp } from '../setup/test-app';
import { suiteEngines } from '../setup/opensearch-suites';

/**
 * Transcript search (workflows-v1 §1): the `q` filter, `q.in` and `highlight=true`, each rule in
 * the spec's words. The parameter rules run once (they are the shared parser's); the matching
 * rules, highlights, count and statistics run on every engine: Postgres always, OpenSearch when
 * OPENSEARCH_URL is set (on an alias of this suite's own, synced before each request, without a
 * Postgres fallback that could hide a difference), else reported as skipped.
 */
const appOn = (env: Record<string, string>) =>
  createTestApp({ ...OWN_BUDGET, ...env }, { redisKeyPrefixSuffix: 'transcript-search:' });
const ENGINES = suiteEngines('transcripts', 'transcript search rules ran on Postgres only');

const text = (t: string) => [{ type: 'text', text: t }];
const said = (role: 'shopper' | 'agent' | 'system', t: string) => ({ role, blocks: text(t) });
/** The code points of `s` between [start, end): what a client does with a match. */
const slice = (s: string, [start, end]: number[]) => [...s].slice(start, end).join('');
const codePoints = (s: string) => [...s].length;

/** The conversations of the matching rules, by name: language, title and messages. */
const DATA: Record<string, { language: string; title: string; messages: unknown[] }> = {
  // Recorded with no message: its transcript is its title alone.
  titleOnly: { language: 'en', title: 'Wishlist bracelets', messages: [] },
  refundLate: {
    language: 'en',
    title: 'Order question',
    messages: [
      said('shopper', 'I want a refund, my parcel arrived late'),
      said('agent', 'Sorry for the delay, the refund is on its way'),
    ],
  },
  refundDelayed: {
    language: 'en',
    title: 'Delivery',
    messages: [
      said('shopper', 'The delivery was delayed and I want a refund'),
      said('agent', 'We will check with the carrier'),
    ],
  },
  giftCard: {
    language: 'en',
    title: 'Gift card',
    messages: [said('shopper', 'Can I get a refund on a gift card?'), said('agent', 'No, sorry.')],
  },
  twoMessages: {
    language: 'en',
    title: 'Where is it',
    messages: [said('shopper', 'my order was late'), said('shopper', 'delivery tomorrow please')],
  },
  titleAndMessage: { language: 'en', title: 'Late', messages: [said('shopper', 'delivery of my order')] },
  phrase: { language: 'en', title: 'Again', messages: [said('shopper', 'a late delivery again')] },
  delayedOnly: { language: 'en', title: 'Flight', messages: [said('shopper', 'Flight delayed')] },
  shoes: {
    language: 'en',
    title: 'Sizes',
    messages: [
      said('shopper', 'These shoes hurt'),
      {
        role: 'agent',
        blocks: [
          { type: 'text', text: 'Try this one' },
          {
            type: 'product_cards',
            products: [{ productId: 'sku-1', name: 'Trail runner sneaker', url: 'https://shop.example/p/1' }],
          },
        ],
      },
    ],
  },
  fr: {
    language: 'fr',
    title: 'Colis 📦 à Zürich',
    messages: [
      said('shopper', 'Bonjour 👋🏽 mes livraisons ne sont pas arrivées à l’ENTREPÔT de Zürich 🇨🇭'),
      said('agent', 'Nous vérifions la livraison.'),
    ],
  },
  de: {
    language: 'de',
    title: 'Bestellung',
    messages: [said('shopper', 'Wo sind meine Lieferungen? Die Häuser sind leer')],
  },
  enWithGermanWord: { language: 'en', title: 'Souvenirs', messages: [said('shopper', 'Two Häuser models')] },
  it: { language: 'it', title: 'Ordine', messages: [said('shopper', 'Dove sono le mie consegne?')] },
  es: { language: 'es', title: 'Pedido', messages: [said('shopper', 'Mis zapatos llegaron rotos')] },
  nl: { language: 'nl', title: 'Bestelling', messages: [said('shopper', 'Mijn bestellingen zijn kwijt')] },
};

describe.each(ENGINES)('transcript search on $name', ({ env }) => {
  let t: TestApp;
  let org: Org;
  const id: Record<string, string> = {};
  const nameOf = (conv: string) => Object.keys(id).find((k) => id[k] === conv) ?? conv;

  beforeAll(async () => {
    t = await appOn(env);
    org = await createOrganization(t.app);
    for (const [name, body] of Object.entries(DATA)) id[name] = (await recordConversation(t, org, body)).id;
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  /** The names of the conversations a listing with `query` finds (every page), sorted. */
  async function found(query: QueryValues): Promise<string[]> {
    const res = await listConversations(t, org, { limit: 100, ...query }).expect(200);
    expect(res.body.meta.nextCursor).toBeNull();
    return (res.body.data as Array<{ id: string }>).map((c) => nameOf(c.id)).sort();
  }

  describe('words separated by spaces must all appear somewhere in the searched text', () => {
    it('refund parcel: both words, in any message or the title', async () => {
      expect(await found({ q: 'refund parcel' })).toEqual(['refundLate']);
      expect(await found({ q: 'refund' })).toEqual(['giftCard', 'refundDelayed', 'refundLate']);
      expect(await found({ q: 'order refund' })).toEqual(['refundLate']);
    });
    it('the title, text blocks and product card names are searched', async () => {
      expect(await found({ q: 'sizes' })).toEqual(['shoes']);
      expect(await found({ q: 'sneaker' })).toEqual(['shoes']);
    });
    it('a conversation recorded with no message is found by its title', async () => {
      expect(await found({ q: 'bracelet' })).toEqual(['titleOnly']);
      expect(await found({ q: '"wishlist bracelets"' })).toEqual(['titleOnly']);
    });
    it('no stop words are dropped', async () => {
      expect(await found({ q: '"on its way"' })).toEqual(['refundLate']);
    });
  });

  describe('"two words" is a phrase: in this order, next to each other, inside one message or the title', () => {
    it('matches inside one message, never across two messages nor the title and a message', async () => {
      expect(await found({ q: '"late delivery"' })).toEqual(['phrase']);
    });
    it('order matters; an unmatched quote closes at the end of q', async () => {
      expect(await found({ q: '"delivery late"' })).toEqual([]);
      expect(await found({ q: 'again "late delivery' })).toEqual(['phrase']);
    });
  });

  describe('-word and -"a phrase" exclude conversations containing it', () => {
    it('-"gift card" excludes the phrase', async () => {
      expect(await found({ q: 'refund -"gift card"' })).toEqual(['refundDelayed', 'refundLate']);
    });
    it('an excluded word excludes its inflected forms too (delay: delay, delayed)', async () => {
      expect(await found({ q: 'refund -delay' })).toEqual(['giftCard']);
    });
  });

  describe('OR matches either and binds tighter than the implicit AND', () => {
    it('refund late OR delayed = refund AND (late OR delayed)', async () => {
      expect(await found({ q: 'refund late OR delayed' })).toEqual(['refundDelayed', 'refundLate']);
    });
    it('lowercase or is a word', async () => {
      expect(await found({ q: 'refund or delayed' })).toEqual([]);
    });
  });

  describe('q.in: all (default), shopper or agent', () => {
    it('shopper searches shopper messages only, agent agent messages only, neither the title', async () => {
      expect(await found({ q: 'refund', 'q.in': 'shopper' })).toEqual([
        'giftCard',
        'refundDelayed',
        'refundLate',
      ]);
      expect(await found({ q: 'refund', 'q.in': 'agent' })).toEqual(['refundLate']);
      expect(await found({ q: 'carrier', 'q.in': 'shopper' })).toEqual([]);
      expect(await found({ q: 'carrier', 'q.in': 'agent' })).toEqual(['refundDelayed']);
      expect(await found({ q: 'sizes', 'q.in': 'shopper' })).toEqual([]);
      expect(await found({ q: 'sizes', 'q.in': 'all' })).toEqual(['shoes']);
    });
  });

  describe('case- and accent-insensitive', () => {
    it('Lieferungen = lieferungen, entrepot = ENTREPÔT, ÉLÈVE-style capitals and accents both ways', async () => {
      expect(await found({ q: 'lieferungen' })).toEqual(['de']);
      expect(await found({ q: 'LIEFERUNGEN' })).toEqual(['de']);
      expect(await found({ q: 'entrepot' })).toEqual(['fr']);
      expect(await found({ q: 'Entrepôt' })).toEqual(['fr']);
      expect(await found({ q: 'zurich' })).toEqual(['fr']);
      expect(await found({ q: 'DÉLIVERY' })).toEqual([
        'phrase',
        'refundDelayed',
        'titleAndMessage',
        'twoMessages',
      ]);
    });
  });

  describe("each word matches its inflected forms in the conversation's own language", () => {
    it.each([
      ['fr', 'livraison', 'livraisons'],
      ['shoes', 'shoe', 'shoes'],
      ['de', 'Lieferung', 'Lieferungen'],
      ['it', 'consegna', 'consegne'],
      ['es', 'zapato', 'zapatos'],
      ['nl', 'bestelling', 'bestellingen'],
    ])('conversation %s: %s finds "%s"', async (name, word) => {
      expect(await found({ q: word })).toContain(name);
    });
    it('a word is stemmed with the conversation language, never another: haus finds Häuser in German only', async () => {
      expect(await found({ q: 'haus' })).toEqual(['de']);
      expect(await found({ q: 'häuser' })).toEqual(['de', 'enWithGermanWord']);
    });
    it('words of a phrase are matched the same way', async () => {
      expect(await found({ q: '"shoe hurts"' })).toEqual(['shoes']);
    });
  });

  describe('count=true with q', () => {
    it('meta.count is the number of matches', async () => {
      const res = await listConversations(t, org, { q: 'refund', count: 'true', limit: 1 }).expect(200);
      expect(res.body.meta.count).toEqual({ value: 3, capped: false });
    });
  });

  describe('statistics with q', () => {
    const stats = (query: QueryValues) => getStats(t, org, query);
    it('count the conversations the listing finds', async () => {
      expect((await stats({ q: 'refund' }).expect(200)).body.data.total).toBe(3);
      expect((await stats({ q: 'refund', 'q.in': 'agent' }).expect(200)).body.data.total).toBe(1);
      expect(
        (await stats({ q: 'refund -"gift card"', facets: 'language' }).expect(200)).body.data.total,
      ).toBe(2);
    });
  });

  describe('highlight=true', () => {
    type Highlight = { messageId: string | null; role: string | null; text: string; matches: number[][] };
    async function highlightsOf(query: QueryValues, name: string): Promise<Highlight[]> {
      const res = await listConversations(t, org, { limit: 100, highlight: 'true', ...query }).expect(200);
      return (res.body.data as Array<{ id: string; highlights: Highlight[] }>).find((c) => c.id === id[name])!
        .highlights;
    }
    const matched = (hs: Highlight[]) => hs.map((h) => h.matches.map((m) => slice(h.text, m)));

    it('without highlight=true the field is absent', async () => {
      const res = await listConversations(t, org, { q: 'refund' }).expect(200);
      for (const item of res.body.data) expect(item).not.toHaveProperty('highlights');
    });
    it('title first (messageId null), then messages oldest first, with code-point offsets on non-ASCII text and emoji', async () => {
      const hs = await highlightsOf({ q: 'livraison entrepot zurich' }, 'fr');
      expect(hs.map((h) => [h.messageId, h.role])).toEqual([
        [null, null],
        [expect.stringMatching(/^msg_/), 'shopper'],
        [expect.stringMatching(/^msg_/), 'agent'],
      ]);
      expect(hs[0].text).toBe('Colis 📦 à Zürich');
      expect(hs[0].matches).toEqual([[10, 16]]);
      expect(matched(hs)).toEqual([['Zürich'], ['livraisons', 'ENTREPÔT', 'Zürich'], ['livraison']]);
    });
    it('excerpts are at most 240 code points; at most 3 entries; only texts inside q.in', async () => {
      const shopper = await highlightsOf({ q: 'refund', 'q.in': 'shopper' }, 'refundLate');
      expect(shopper.map((h) => h.role)).toEqual(['shopper']);
      const all = await highlightsOf({ q: 'refund OR order OR sorry' }, 'refundLate');
      expect(all.map((h) => h.role)).toEqual([null, 'shopper', 'agent']);
      for (const h of all) expect(codePoints(h.text)).toBeLessThanOrEqual(240);
    });
    it('never marks an excluded word', async () => {
      const hs = await highlightsOf({ q: 'refund -"gift card" -sorry' }, 'refundDelayed');
      expect(matched(hs)).toEqual([['refund']]);
    });
    it('highlight is not part of the cursor', async () => {
      const first = await listConversations(t, org, { q: 'refund', limit: 1 }).expect(200);
      const next = await listConversations(t, org, {
        q: 'refund',
        limit: 1,
        highlight: 'true',
        cursor: first.body.meta.nextCursor,
      }).expect(200);
      expect(next.body.data[0].highlights.length).toBeGreaterThan(0);
    });
  });

  describe('hostile q never gives a 5xx', () => {
    const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');
    it.each([
      ['32 terms of OR', Array.from({ length: 32 }, (_, i) => `w${i}`).join(' OR ')],
      ['32 ORs alone', Array(32).fill('OR').join(' ')],
      ['500 characters of one word', 'a'.repeat(500)],
      ['500 characters of one non-Latin word', '東'.repeat(500)],
      ['quotes and dashes only', '"-'.repeat(250)],
      ['lone surrogates', '\uD800a\uDC00 \uDFFF'],
      ['every punctuation', ascii.replace(/[A-Za-z0-9]/g, '') + ' x'],
      ['tsquery operators', "x & y | !z <-> (w) :* 'a':B"],
      ['32 phrases', Array.from({ length: 32 }, (_, i) => `"a${i} b${i}"`).join(' ')],
    ])('%s', async (_name, q) => {
      for (const query of [{ q }, { q, 'q.in': 'shopper', highlight: 'true', count: 'true' }]) {
        const res = await listConversations(t, org, query);
        expect([200, 400]).toContain(res.status);
      }
    });
  });
});

describe('parameter rules of q, q.in and highlight (the shared parser)', () => {
  let t: TestApp;
  let org: Org;
  postgresAppPerSuite((app) => (t = app), 'transcript-search:', OWN_BUDGET);
  beforeAll(async () => {
    org = await createOrganization(t.app);
    for (let i = 0; i < 3; i++)
      await recordConversation(t, org, { messages: [said('shopper', `refund number ${i}`)] });
  });
  const list = (query: QueryValues) => listConversations(t, org, query);
  const entries = (res: { body: { errors: Array<Record<string, string>> } }) =>
    res.body.errors.map((e) => [e.code, e.parameter]);

  it('q is 1 to 500 characters (code points); longer is 400 invalid_request naming q', async () => {
    await list({ q: 'a'.repeat(500) }).expect(200);
    await list({ q: `a ${'🛒'.repeat(498)}` }).expect(200);
    for (const q of ['a'.repeat(501), `a ${'🛒'.repeat(499)}`, '']) {
      const res = await list({ q }).expect(400);
      expect(res.body.code).toBe('invalid_request');
      expect(entries(res)).toEqual([['invalid_value', 'q']]);
    }
  });
  it('q and q.in are single-valued: twice is duplicate_parameter', async () => {
    const res = await list({ q: ['a', 'b'] }).expect(400);
    expect(entries(res)).toEqual([['duplicate_parameter', 'q']]);
    const twice = await list({ q: 'a', 'q.in': ['all', 'agent'] }).expect(400);
    expect(entries(twice)).toEqual([['duplicate_parameter', 'q.in']]);
  });
  it('q.in is all, shopper or agent; without q it is 400 invalid_filter naming q.in', async () => {
    expect(entries(await list({ q: 'a', 'q.in': 'title' }).expect(400))).toEqual([['invalid_value', 'q.in']]);
    const res = await list({ 'q.in': 'shopper' }).expect(400);
    expect(res.body.code).toBe('invalid_filter');
    expect(entries(res)).toEqual([['invalid_filter', 'q.in']]);
  });
  it('a q with no positive term (empty after parsing, or only exclusions) is 400 invalid_filter naming q', async () => {
    for (const q of ['-refund', '-"gift card" -late', '"-"', ' , ', 'OR', '\uD800']) {
      const res = await list({ q }).expect(400);
      expect({ q, code: res.body.code, entries: entries(res) }).toEqual({
        q,
        code: 'invalid_filter',
        entries: [['invalid_filter', 'q']],
      });
    }
  });
  it('more than 32 terms (words, phrases and exclusions all count; OR does not) is 400 invalid_filter naming q', async () => {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`);
    await list({ q: words(32).join(' OR ') }).expect(200);
    await list({ q: `${words(30).join(' ')} "a b" -c` }).expect(200);
    for (const q of [words(33).join(' '), `${words(31).join(' ')} "a b" -c`, `${words(32).join(' ')} -c`]) {
      const res = await list({ q }).expect(400);
      expect(entries(res)).toEqual([['invalid_filter', 'q']]);
    }
  });
  it('a cursor used with another q or q.in is 400 cursor_mismatch; highlight and count are not part of it', async () => {
    const first = await list({ q: 'refund', limit: 1 }).expect(200);
    const cursor = first.body.meta.nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    for (const other of [{ q: 'refunds' }, { q: 'refund', 'q.in': 'shopper' }, {}]) {
      const res = await list({ ...other, limit: 1, cursor }).expect(400);
      expect(res.body.code).toBe('cursor_mismatch');
    }
    await list({ q: 'refund', 'q.in': 'all', limit: 1, cursor, highlight: 'true', count: 'true' }).expect(
      200,
    );
    await list({ q: 'Refund', limit: 1, cursor }).expect(200);
  });
  it('q as bytes that are not UTF-8 (a lone surrogate encoded, a stray byte) is a 400, never a 5xx', async () => {
    for (const raw of ['%ED%A0%80', '%ED%A0%80a', 'a%FFb', '%C3']) {
      const res = await t.http().get(`/api/v1/sites/${org.site.id}/conversations?q=${raw}`).set(org.auth);
      expect({ raw, status: res.status < 500 }).toEqual({ raw, status: true });
    }
  });
  it('highlight is true or false; with it and no q every item has an empty highlights list', async () => {
    expect(entries(await list({ highlight: 'yes' }).expect(400))).toEqual([['invalid_value', 'highlight']]);
    const res = await list({ highlight: 'true' }).expect(200);
    expect(res.body.data.map((c: { highlights: unknown }) => c.highlights)).toEqual([[], [], []]);
  });
  it('statistics take q and q.in under the same rules; highlight is not a parameter there', async () => {
    const stats = (query: QueryValues) => getStats(t, org, query);
    expect(entries(await stats({ 'q.in': 'agent' }).expect(400))).toEqual([['invalid_filter', 'q.in']]);
    expect(entries(await stats({ q: '-x' }).expect(400))).toEqual([['invalid_filter', 'q']]);
    expect(entries(await stats({ q: 'a'.repeat(501) }).expect(400))).toEqual([['invalid_value', 'q']]);
    expect(entries(await stats({ q: 'a', highlight: 'true' }).expect(400))).toEqual([
      ['unknown_parameter', 'highlight'],
    ]);
  });
  it('exports take filters.q and filters["q.in"], faults located by JSON pointer', async () => {
    const pointers = (res: { body: { errors: Array<Record<string, string>> } }) =>
      res.body.errors.map((e) => [e.code, e.pointer]);
    const post = (filters: Record<string, unknown>) => postExport(t, org, { format: 'ndjson', filters });
    expect(pointers(await post({ q: '-refund' }).expect(400))).toEqual([['invalid_filter', '/filters/q']]);
    expect(pointers(await post({ 'q.in': 'agent' }).expect(400))).toEqual([
      ['invalid_filter', '/filters/q.in'],
    ]);
    expect(pointers(await post({ q: 'a'.repeat(501) }).expect(400))).toEqual([
      ['invalid_value', '/filters/q'],
    ]);
    expect(pointers(await post({ q: ['refund'] }).expect(400))).toEqual([['invalid_type', '/filters/q']]);
    expect(pointers(await post({ q: 'a', highlight: true }).expect(400))).toEqual([
      ['unknown_field', '/filters/highlight'],
    ]);
    const res = await post({ q: 'refund', 'q.in': 'shopper' }).expect(202);
    expect(res.body.data.filters).toEqual({ q: 'refund', 'q.in': 'shopper' });
  });
});

describe('exports with filters.q hold exactly the conversations the listing finds', () => {
  let t: TestApp;
  let org: Org;
  exportingAppPerSuite((app) => (t = app), 'transcript-exports:');

  it('ndjson lines are the listing items of the same q', async () => {
    org = await createOrganization(t.app);
    for (const name of ['refundLate', 'refundDelayed', 'giftCard', 'shoes'])
      await recordConversation(t, org, DATA[name]);
    const filters = { q: 'refund -"gift card"', 'q.in': 'shopper' };
    const e = await createExport(t, org, { format: 'ndjson', filters });
    const done = await finishedExport(t, org, e.id);
    expect(done.state).toBe('completed');
    const lines = await downloadedRecords(t, org, e.id);
    const listed = await listConversations(t, org, { ...filters, limit: 100 }).expect(200);
    expect(listed.body.data).toHaveLength(2);
    // An export line is the list item plus the conversation's outcome (outcomes-v1 §3).
    expect(lines.map((l) => JSON.parse(l))).toEqual(
      listed.body.data.map((item: object) => ({ ...item, outcome: { orders: 0, revenue: [] } })),
    );
  }, 60_000);
});
