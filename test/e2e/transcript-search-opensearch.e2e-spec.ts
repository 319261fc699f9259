import { describe, expect, it } from '@jest/globals';
import type { Client } from '@opensearch-project/opensearch';
import { emptyFilter, Language } from '../../src/search/listing/conversation-filter';
import { SearchIndexer } from '../../src/search/mirror/search-indexer.service';
import { bulkBodies } from '../../src/search/opensearch/bulk-body';
import { conversationIndexBody } from '../../src/search/opensearch/conversation-index';
import { MAPPING_VERSION, mappingVersionOf } from '../../src/search/opensearch/opensearch-client';
import { OpenSearchConversationSearch } from '../../src/search/opensearch/opensearch-conversation-search';
import { ReindexService } from '../../src/search/reindex.service';
import type { TextQuery } from '../../src/search/text-query/text-query';
import { isTextQueryFault, parseTextQuery } from '../../src/search/text-query/text-query-parser';
import { appendMessages, recordConversation } from '../factories/conversations';
import { createOrganization } from '../factories/organizations';
import type { TestApp } from '../setup/test-app';
import {
  describeOnOpenSearch,
  servedByOpenSearchPerSuite,
  suiteIndexNames,
} from '../setup/opensearch-suites';

const describeReal = describeOnOpenSearch('transcript search on OpenSearch');

type Org = Awaited<ReturnType<typeof createOrganization>>;
type Msg = { role: 'shopper' | 'agent' | 'system'; blocks: object[] };
const say = (role: Msg['role'], text: string): Msg => ({ role, blocks: [{ type: 'text', text }] });

/**
 * What the OpenSearch engine does with `q` (workflows-v1 §1), on the run's real node: the
 * per-language transcript fields and analyzers of mapping version 2 (stemming in the
 * conversation's language, case and accents folded, no stop words, phrases inside one message),
 * the mirror and search:reindex writing the transcript, an alias still on a version 1 index, and
 * the known differences of the standard tokenizer from Postgres' parser (docs/opensearch.md).
 * The engine is asked directly (no re-check against Postgres, no fallback), on the suite's own
 * alias and database; the mirror is drained by hand.
 */
describeReal('transcript search (q) on OpenSearch', () => {
  const names = suiteIndexNames('transcript');
  let admin: Client;
  let t: TestApp;
  let org: Org;
  let engine: OpenSearchConversationSearch;

  const record = async (language: Language, messages: Msg[], title = 'Conversation') =>
    (await recordConversation(t, org, { language, title, messages })).id;
  const sync = async () => {
    await t.app.get(SearchIndexer).drain();
    await admin.indices.refresh({ index: names.alias });
  };
  const parse = (q: string, scope: TextQuery['scope'] = 'all'): TextQuery => {
    const parsed = parseTextQuery(q, scope);
    if (isTextQueryFault(parsed)) throw new Error(`q refused: ${q}`);
    return parsed;
  };
  /** Ids of the conversations OpenSearch finds for `q` among `among` (the test's own). */
  const found = async (
    q: string,
    among: string[],
    options: { scope?: TextQuery['scope']; language?: Language } = {},
  ): Promise<string[]> => {
    const page = await engine.page(
      org.site.id,
      {
        ...emptyFilter(),
        text: parse(q, options.scope),
        ...(options.language ? { language: options.language } : {}),
      },
      { limit: 100 },
    );
    return page.items.map((i) => i.id).filter((id) => among.includes(id));
  };

  servedByOpenSearchPerSuite(names, {
    env: { OPENSEARCH_SHARDS: '1', OPENSEARCH_REPLICAS: '0', OPENSEARCH_TIMEOUT_MS: '10000' },
    redisKeyPrefixSuffix: 'transcript-os:',
    ready: async (suite) => {
      ({ t, admin } = suite);
      await t.app.get(ReindexService).reindex();
      engine = new OpenSearchConversationSearch(admin, names.alias);
      org = await createOrganization(t.app);
    },
    beforeClose: async () => {
      await admin.indices.delete({ index: `${names.alias}_v*` }).catch(() => undefined);
    },
    timeoutMs: 120_000,
  });

  describe("each word matches its inflected forms in the conversation's own language (Snowball)", () => {
    const cases: Array<[Language, string, string]> = [
      ['fr', 'Deux livraisons sont arrivées', 'livraison'],
      ['en', 'These shoes are too small', 'shoe'],
      ['de', 'Alle Lieferungen kommen morgen', 'Lieferung'],
      ['it', 'Gli ordini sono partiti', 'ordine'],
      ['es', 'Los zapatos son rojos', 'zapato'],
      ['nl', 'De bestellingen zijn onderweg', 'bestelling'],
    ];
    it.each(cases)('%s: %j is found by %j', async (language, text, word) => {
      const id = await record(language, [say('shopper', text)]);
      await sync();
      expect(await found(word, [id])).toEqual([id]);
    });

    it('the stemmer is the conversation language\'s: "running" is "run" in English, not in French', async () => {
      const en = await record('en', [say('shopper', 'I am running out of patience')]);
      const fr = await record('fr', [say('shopper', 'Le running club est fermé')]);
      await sync();
      expect(await found('run', [en, fr])).toEqual([en]);
      expect((await found('running', [en, fr])).sort()).toEqual([en, fr].sort());
    });
  });

  describe('case- and accent-insensitive, no stop words', () => {
    it('Lieferung = LIEFERUNG = lieferung; é = e both ways; ß = ss', async () => {
      const de = await record('de', [say('agent', 'Ihre LIEFERUNG kommt über die Straße')]);
      const fr = await record('fr', [say('shopper', "L'été dernier")]);
      await sync();
      expect(await found('lieferung', [de])).toEqual([de]);
      expect(await found('uber strasse', [de])).toEqual([de]);
      expect(await found('ete', [fr])).toEqual([fr]);
      expect(await found('ÉTÉ', [fr])).toEqual([fr]);
    });

    it('stop words are searchable ("the", "le"), and an apostrophe separates words as in Postgres', async () => {
      const en = await record('en', [say('shopper', 'Where is the parcel')]);
      const fr = await record('fr', [say('shopper', "Où est l'avion")]);
      await sync();
      expect(await found('the', [en, fr])).toEqual([en]);
      expect(await found('avion', [en, fr])).toEqual([fr]);
      expect(await found('"l avion"', [en, fr])).toEqual([fr]);
    });
  });

  describe('what is searched: the title, every text block, every product card name', () => {
    it('a product card name and the title are found; a product url is not', async () => {
      const id = await record(
        'en',
        [
          {
            role: 'agent',
            blocks: [
              { type: 'text', text: 'Here you go' },
              {
                type: 'product_cards',
                products: [
                  {
                    productId: 'sku-1',
                    name: 'Trailblazer boots',
                    url: 'https://shop.example/zanzibar',
                    price: null,
                  },
                ],
              },
            ],
          },
        ],
        'Hiking question',
      );
      await sync();
      expect(await found('trailblazer boot', [id])).toEqual([id]);
      expect(await found('hiking', [id])).toEqual([id]);
      expect(await found('zanzibar', [id])).toEqual([]);
    });
  });

  describe('a phrase: its words in order, next to each other, inside one message (or the title)', () => {
    it('matches inside a message, never across two messages or the title and a message', async () => {
      const id = await record(
        'en',
        [say('shopper', 'I need the size'), say('shopper', 'large enough for winter')],
        'Red',
      );
      await sync();
      expect(await found('"large enough"', [id])).toEqual([id]);
      expect(await found('"size large"', [id])).toEqual([]);
      expect(await found('"red i"', [id])).toEqual([]);
      expect(await found('"enough large"', [id])).toEqual([]);
      // Words of a phrase are stemmed too.
      expect(await found('"needs the sizes"', [id])).toEqual([id]);
    });
  });

  describe('q.in, exclusions and OR', () => {
    it('q.in=shopper / agent search that role only; all includes the title and system', async () => {
      const id = await record(
        'en',
        [say('shopper', 'refund please'), say('agent', 'voucher offered'), say('system', 'escalated')],
        'Billing',
      );
      await sync();
      expect(await found('refund', [id], { scope: 'shopper' })).toEqual([id]);
      expect(await found('refund', [id], { scope: 'agent' })).toEqual([]);
      expect(await found('voucher', [id], { scope: 'agent' })).toEqual([id]);
      expect(await found('billing', [id], { scope: 'shopper' })).toEqual([]);
      expect(await found('billing escalated', [id])).toEqual([id]);
    });

    it('-word excludes; refund late OR delayed = refund AND (late OR delayed)', async () => {
      const late = await record('en', [say('shopper', 'refund for a late parcel')]);
      const delayed = await record('en', [say('shopper', 'refund, parcel delayed')]);
      const neither = await record('en', [say('shopper', 'delayed, no money back')]);
      await sync();
      const all = [late, delayed, neither];
      expect((await found('refund late OR delayed', all)).sort()).toEqual([late, delayed].sort());
      expect(await found('refund -late', all)).toEqual([delayed]);
      expect(await found('parcel -"a late parcel"', all)).toEqual([delayed]);
      expect(await found('delayed', all, { language: 'en' })).toEqual([neither, delayed]);
    });

    it('hostile: 32 terms of OR, a 500-character word, a phrase of 200 words are answered', async () => {
      const id = await record('en', [say('shopper', 'w31 is here')]);
      await sync();
      const or = Array.from({ length: 32 }, (_, i) => `w${i}`).join(' OR ');
      expect(await found(or, [id])).toEqual([id]);
      expect(await found('x'.repeat(500), [id])).toEqual([]);
      expect(await found(`"${Array.from({ length: 200 }, () => 'a').join(' ')}"`, [id])).toEqual([]);
    });
  });

  describe('the mirror and search:reindex write the transcript', () => {
    it('on record, and on append', async () => {
      const id = await record('en', [say('shopper', 'Hello there')]);
      await sync();
      expect(await found('hello', [id])).toEqual([id]);
      expect(await found('umbrella', [id])).toEqual([]);
      await appendMessages(t, org, id, [say('agent', 'Your umbrellas are packed')]).expect(201);
      await sync();
      expect(await found('umbrella', [id])).toEqual([id]);
      expect(await found('umbrella', [id], { scope: 'shopper' })).toEqual([]);
    });

    it('large documents: a drain of ~9 MB of transcripts is sent in bodies of at most 8 MB, all written', async () => {
      // 5 messages of 9 blocks of ~20,000 characters: ~900 KB a conversation (a message's searched
      // text is cut at 200,000 characters, as Postgres cuts it).
      const text = Array.from({ length: 2_400 }, (_, i) => `lorem${i % 97}`)
        .join(' ')
        .slice(0, 19_990);
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) {
        const big: Msg = { role: 'shopper', blocks: Array(9).fill({ type: 'text', text }) };
        ids.push(await record('en', [say('shopper', `marker${i}`), big, big, big, big, big]));
      }
      const result = await t.app.get(SearchIndexer).drain();
      expect(result.postponed).toBe(0);
      await admin.indices.refresh({ index: names.alias });
      for (let i = 0; i < 10; i++) expect(await found(`marker${i} lorem5`, ids)).toEqual([ids[i]]);
    }, 180_000);

    it('search:reindex copies the transcript into the new index', async () => {
      const id = await record('it', [say('agent', 'Le spedizioni partono domani')]);
      await sync();
      const summary = await t.app.get(ReindexService).reindex({ deletePrevious: true });
      expect(mappingVersionOf(names, summary.index)).toBe(MAPPING_VERSION);
      await admin.indices.refresh({ index: names.alias });
      expect(await found('spedizione', [id])).toEqual([id]);
    });
  });

  describe('an alias still on a mapping version 1 index (before search:reindex)', () => {
    /** The version 1 index: no transcript fields or analyzers. */
    const v1Body = () => {
      const body = conversationIndexBody(1, 0) as unknown as {
        settings: { analysis: { analyzer: Record<string, unknown>; filter?: unknown } };
        mappings: { properties: Record<string, unknown>; _source?: unknown };
      };
      const analyzer = Object.fromEntries(
        Object.entries(body.settings.analysis.analyzer).filter(([k]) => !k.startsWith('transcript_')),
      );
      const properties = Object.fromEntries(
        Object.entries(body.mappings.properties).filter(([k]) => !k.startsWith('transcript_')),
      );
      return {
        settings: { ...body.settings, analysis: { ...body.settings.analysis, analyzer, filter: undefined } },
        mappings: { ...body.mappings, _source: undefined, properties },
      };
    };

    it('the indexer keeps writing (version 1 documents), the listing without q is served, q fails (so Postgres answers) until search:reindex moves the alias', async () => {
      // As a deployment of the previous release left it: the alias on <alias>_v1 only.
      await admin.indices.delete({ index: `${names.alias}_v*` });
      const v1 = `${names.alias}_v1`;
      await admin.indices.create({
        index: v1,
        body: { ...v1Body(), aliases: { [names.alias]: {} } } as never,
      });
      const id = await record('en', [say('shopper', 'parcels everywhere')], 'Legacy index');
      const drained = await t.app.get(SearchIndexer).drain();
      expect(drained).toMatchObject({ postponed: 0, targets: [v1] });
      await admin.indices.refresh({ index: names.alias });

      const listed = await engine.page(
        org.site.id,
        { ...emptyFilter(), keywords: ['legacy'] },
        { limit: 10 },
      );
      expect(listed.items.map((i) => i.id)).toEqual([id]);
      await expect(found('parcel', [id])).rejects.toThrow(/analyzer \[transcript_..\] not found/);

      const summary = await t.app.get(ReindexService).reindex();
      expect(summary.previousIndices).toEqual([v1]);
      expect(mappingVersionOf(names, summary.index)).toBe(MAPPING_VERSION);
      const { body } = await admin.indices.getAlias({ name: names.alias });
      expect(Object.keys(body as object)).toEqual([summary.index]);
      await admin.indices.refresh({ index: names.alias });
      expect(await found('parcel', [id])).toEqual([id]);
    });
  });

  describe("known differences from Postgres' word splitting (docs/opensearch.md)", () => {
    // Postgres' parser keeps an e-mail address, a URL's host and path, and "v2.5" (file) whole,
    // and reads "1,000.50" as 1 and 000.50; the standard tokenizer splits or keeps them otherwise.
    it('e-mail address: its local part is a word here (Postgres: the address is one token)', async () => {
      const id = await record('en', [say('shopper', 'write to anna@shop.example please')]);
      await sync();
      expect(await found('anna', [id])).toEqual([id]);
      expect(await found('shop', [id])).toEqual([]);
    });

    it("URL: the scheme and the path's words are words here (Postgres: protocol, host, path tokens)", async () => {
      const id = await record('en', [say('agent', 'see https://shop.example/returns')]);
      await sync();
      expect(await found('https', [id])).toEqual([id]);
      expect(await found('return', [id])).toEqual([id]);
      expect(await found('example', [id])).toEqual([]);
    });

    it('numbers with separators: "1,000.50" is one token here, found by no q (Postgres: 1 and 000.50)', async () => {
      const id = await record('en', [say('agent', 'the total is 1,000.50 euros, at 12:30')]);
      await sync();
      expect(await found('1', [id])).toEqual([]);
      expect(await found('1000', [id])).toEqual([]);
      expect(await found('"1 000 50"', [id])).toEqual([]);
      expect(await found('12', [id])).toEqual([id]);
      expect(await found('"12 30"', [id])).toEqual([id]);
    });
  });
});

describe('bulk bodies stay under MAX_BULK_BYTES', () => {
  it('operations are split in order, an operation larger than the limit alone in its body', () => {
    const doc = (n: number) => ({ text: 'x'.repeat(n) });
    const ops: Array<[object, object]> = [
      [{ index: { _id: 'a' } }, doc(40)],
      [{ index: { _id: 'b' } }, doc(40)],
      [{ index: { _id: 'c' } }, doc(300)],
      [{ index: { _id: 'd' } }, doc(10)],
    ];
    const bodies = bulkBodies(ops, 150);
    expect(bodies.map((b) => b.count)).toEqual([2, 1, 1]);
    expect(bodies.map((b) => b.body).join('')).toBe(
      ops.map((o) => o.map((l) => `${JSON.stringify(l)}\n`).join('')).join(''),
    );
    expect(Buffer.byteLength(bodies[0].body)).toBeLessThanOrEqual(150);
  });
});
