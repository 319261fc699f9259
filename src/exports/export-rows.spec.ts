import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { types } from 'pg';
import { presentConversation } from '../conversations/conversation.presenter';
import type { ConversationRecord } from '../database/records/conversation.records';
import { CSV_COLUMNS, CSV_HEADER, csvCell, csvCells, csvRecord, csvText, ndjsonLine } from './export-rows';
import { numberText, RawRow } from '../database/records/conversation-text';

describe("numberText: a number's text exactly as String() writes it (without V8's number-string cache)", () => {
  it('equals String(n) for every double, integers, -0, NaN and the infinities', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.integer(), fc.maxSafeInteger()), (n) => {
        expect(numberText(n)).toBe(String(n));
      }),
      { numRuns: 20_000 },
    );
    for (const n of [-0, 0, NaN, Infinity, -Infinity, 1e21, 1e-7, 2 ** 53 + 2, 5e-324])
      expect(numberText(n)).toBe(String(n));
  });
});

describe('CSV cells: a cell that starts with =, +, -, @, tab or carriage return is prefixed with a quote', () => {
  it.each(['=1+1', '+33 6 12', '-2', '@SUM(A1)', '\tx', '\rx'])('%j gets a leading apostrophe', (text) => {
    expect(csvCell(text)).toBe(`'${text}`);
  });

  it('other cells are left as they are; null is empty; lists are joined with |', () => {
    expect(csvCell('Where is my order?')).toBe('Where is my order?');
    expect(csvCell(' =x')).toBe(' =x');
    expect(csvCell(null)).toBe('');
    expect(csvCell(0.75)).toBe('0.75');
    expect(csvCell(['a:b', 'c:true'])).toBe('a:b|c:true');
    expect(csvCell([])).toBe('');
  });
});

describe('CSV text: RFC 4180 with CRLF line ends', () => {
  it('the header is the columns in order, ended by CRLF', () => {
    expect(CSV_HEADER).toBe(`${CSV_COLUMNS.join(',')}\r\n`);
  });

  it('quotes commas, quotes and line breaks, and reads back to the same cells', () => {
    const rows = [['a,b', 'say "hi"', 'two\nlines', 'plain']];
    const text = csvText(rows);
    expect(text).toBe('"a,b","say ""hi""","two\nlines",plain\r\n');
    expect(parse(text, { record_delimiter: '\r\n' })).toEqual(rows);
  });

  it('a record joined without the library (no cell needing quotes) is what the library writes', () => {
    const cell = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.constantFrom(
        '',
        ' ',
        'a b',
        ' a',
        'a ',
        '\u00a0x',
        'x\u2028',
        'a,b',
        '"',
        '\r\n',
        '\n',
        '\r',
        'plain',
      ),
    );
    fc.assert(
      fc.property(fc.array(cell, { minLength: 1, maxLength: 6 }), (cells) => {
        expect(csvRecord(cells)).toBe(csvText([cells]));
      }),
      { numRuns: 2000 },
    );
  });
});

// ---- The reference: the listing's path (pg's parsers, presentConversation), to compare the fast lines with.

const parserOf = (oid: number) => (types.getTypeParser as (oid: number) => (text: string) => unknown)(oid);
const OID = { bool: 16, int8: 20, int4: 23, float8: 701, textArray: 1009, timestamptz: 1184, jsonb: 3802 };
const SITE_ID = 'site_3x4mpl3';

/** The row as the listing's repository reads it (pg's type parsers on the same text). */
function recordOf(r: RawRow): ConversationRecord {
  const p = <T>(oid: number, text: string | null) => (text === null ? null : (parserOf(oid)(text) as T));
  return {
    id: r[0]!,
    organizationId: 'org_x',
    siteId: SITE_ID,
    title: r[1]!,
    channel: r[2]!,
    language: r[3]!,
    createdAt: p<Date>(OID.timestamptz, r[4])!,
    updatedAt: p<Date>(OID.timestamptz, r[5])!,
    agentId: r[6]!,
    agentName: r[7]!,
    agentVersion: p<number>(OID.int4, r[8])!,
    agentVersionId: r[9]!,
    entryWidget: p(OID.jsonb, r[10]),
    hasPageContext: p<boolean>(OID.bool, r[11])!,
    pageType: r[12],
    pageProductId: r[13],
    pageCategoryName: r[14],
    pageUrl: r[15],
    metadata: null,
    messageCount: p<number>(OID.int4, r[16])!,
    feedbackPositive: p<number>(OID.int4, r[17])!,
    feedbackNegative: p<number>(OID.int4, r[18])!,
    impressions: p<string>(OID.int8, r[19])!,
    clicks: p<string>(OID.int8, r[20])!,
    labelStatus: r[21] as ConversationRecord['labelStatus'],
    currentLabelId: null,
    labelResolution: r[22],
    labelReviewReason: r[23],
    scoreQuality: p<number>(OID.float8, r[24]),
    scoreService: p<number>(OID.float8, r[25]),
    scoreTrust: p<number>(OID.float8, r[26]),
    failedCriteria: p<string[]>(OID.textArray, r[27])!,
    reviewState: r[28] as ConversationRecord['reviewState'],
    labelTokens: p<string[]>(OID.textArray, r[29])!,
  };
}

/** The CSV cells of the list item, column by column (README, "CSV columns"). */
function referenceCsvCells(
  c: ConversationRecord,
  outcome: { orders: number; revenue: Array<{ currency: string; net: number }> },
): string[] {
  const item = presentConversation(c);
  const labeled = item.labelSummary;
  const values: Record<(typeof CSV_COLUMNS)[number], unknown> = {
    id: item.id,
    createdAt: item.createdAt,
    updatedAt: item.updatedAt,
    title: item.title,
    channel: item.channel,
    language: item.language,
    agentId: item.agentId,
    agentName: item.agentName,
    agentVersion: item.agentVersion,
    agentVersionId: item.agentVersionId,
    entryWidgetId: item.entryWidget?.id ?? null,
    pageType: item.pageContext?.pageType ?? null,
    productId: item.pageContext?.productId ?? null,
    categoryName: item.pageContext?.categoryName ?? null,
    pageUrl: item.pageContext?.pageUrl ?? null,
    messageCount: item.messageCount,
    durationMs: item.durationMs,
    feedbackPositive: item.feedback.positive,
    feedbackNegative: item.feedback.negative,
    impressions: item.productEngagement.impressions,
    clicks: item.productEngagement.clicks,
    labelStatus: item.labelStatus,
    resolution: labeled?.resolution ?? null,
    reviewReason: labeled?.reviewReason ?? null,
    quality: labeled?.scores.quality ?? null,
    service: labeled?.scores.service ?? null,
    trust: labeled?.scores.trust ?? null,
    failedCriteria: labeled ? labeled.failedCriteria : null,
    labelTokens: c.labelStatus === 'labeled' ? c.labelTokens : null,
    orders: outcome.orders,
    revenue: outcome.revenue.map((e) => `${e.currency}:${e.net}`).join(';'),
  };
  return CSV_COLUMNS.map((column) => csvCell(values[column]));
}

// ---- Generated rows, in PostgreSQL's text output.

/** Text PostgreSQL can hold: no NUL, no lone surrogate (it stores UTF-8). */
const pgText = fc
  .oneof(
    { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
    fc.constantFrom(
      '',
      'plain',
      'a,b',
      'say "hi"',
      'two\nlines',
      '=SUM(A1)',
      '-3',
      ' edge ',
      'back\\slash',
      'NULL',
    ),
  )
  .map((s) => s.replace(/\u0000/g, ''));

/** A text[] as array_out writes it. */
function pgArray(items: Array<string | null>): string {
  const element = (s: string | null) =>
    s === null
      ? 'NULL'
      : s === '' || /^null$/i.test(s) || /[{}",\\\s]/.test(s)
        ? `"${s.replace(/[\\"]/g, (ch) => `\\${ch}`)}"`
        : s;
  return `{${items.map(element).join(',')}}`;
}

const two = (n: number) => String(n).padStart(2, '0');
/** timestamptz as PostgreSQL writes it: in UTC, or (rarely) another zone, fraction without trailing zeros. */
const pgTimestamp = fc
  .record({
    year: fc.oneof(
      { weight: 5, arbitrary: fc.integer({ min: 2020, max: 2030 }) },
      fc.integer({ min: 1, max: 9999 }),
    ),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 28 }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.integer({ min: 0, max: 59 }),
    micros: fc.oneof(
      fc.constant(0),
      fc.integer({ min: 0, max: 999 }).map((ms) => ms * 1000),
      fc.integer({ min: 0, max: 999_999 }),
    ),
    zone: fc.oneof({ weight: 9, arbitrary: fc.constant('+00') }, fc.constantFrom('+02', '-05:30')),
  })
  .map(({ year, month, day, hour, minute, second, micros, zone }) => {
    const fraction = micros ? `.${String(micros).padStart(6, '0').replace(/0+$/, '')}` : '';
    return `${String(year).padStart(4, '0')}-${two(month)}-${two(day)} ${two(hour)}:${two(minute)}:${two(second)}${fraction}${zone}`;
  });

/** float8 as float8out writes it (exponents with two digits at least). */
const pgFloat = fc
  .oneof(
    fc.double({ min: 0, max: 1 }),
    fc.double(),
    fc.constantFrom(0, 1, 0.5, 1e-5, 1e21, -0.25, NaN, Infinity, -Infinity),
  )
  .map((n) =>
    Number.isNaN(n)
      ? 'NaN'
      : n === Infinity
        ? 'Infinity'
        : n === -Infinity
          ? '-Infinity'
          : String(n).replace(/e([+-])(\d)$/, 'e$10$2'),
  );

const nullable = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null, freq: 4 });

/** The outcome column as exportSelect's subquery writes it: `<orders>|<currency>:<net>;…`. */
const outcomeOf = fc
  .uniqueArray(fc.stringMatching(/^[A-Z]{3}$/), { maxLength: 3 })
  .chain((currencies) =>
    fc.tuple(
      fc.constant([...currencies].sort()),
      fc.array(fc.integer({ min: 0, max: 1_000_000_000_000 }), {
        minLength: currencies.length,
        maxLength: currencies.length,
      }),
      fc.integer({ min: 0, max: 3 }),
    ),
  )
  .map(([currencies, nets, extra]) => ({
    orders: currencies.length + extra * (currencies.length ? 1 : 0),
    revenue: currencies.map((currency, i) => ({ currency, net: nets[i] })),
  }));
const outcomeText = outcomeOf.map(
  (o) => `${o.orders}|${o.revenue.map((r) => `${r.currency}:${r.net}`).join(';')}`,
);
/** The outcome a row's text stands for, read independently of outcomeJson. */
const outcomeOfRow = (r: RawRow) => {
  const [orders, revenue] = r[r.length - 1]!.split('|');
  return {
    orders: Number(orders),
    revenue: revenue
      ? revenue.split(';').map((entry) => ({ currency: entry.slice(0, 3), net: Number(entry.slice(4)) }))
      : [],
  };
};

const rawRow: fc.Arbitrary<RawRow> = fc
  .record({
    id: fc.stringMatching(/^conv_[a-z0-9]{1,22}$/),
    title: pgText,
    channel: fc.constantFrom('web', 'hosted', 'playground'),
    language: pgText,
    createdAt: pgTimestamp,
    updatedAt: pgTimestamp,
    agentId: pgText,
    agentName: pgText,
    agentVersion: fc.integer().map(String),
    agentVersionId: pgText,
    entryWidget: nullable(
      fc.record({ id: pgText, kind: pgText, name: pgText }).map(
        (o) =>
          `{${Object.entries(o)
            .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
            .join(', ')}}`,
      ),
    ),
    hasPageContext: fc.constantFrom('t', 'f'),
    pageType: nullable(pgText),
    productId: nullable(pgText),
    categoryName: nullable(pgText),
    pageUrl: nullable(pgText),
    messageCount: fc.nat().map(String),
    feedbackPositive: fc.nat().map(String),
    feedbackNegative: fc.nat().map(String),
    impressions: fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }).map(String),
    clicks: fc.bigInt({ min: 0n, max: 2n ** 40n }).map(String),
    labelStatus: fc.constantFrom('labeled', 'pending', 'failed', 'not_eligible'),
    resolution: nullable(pgText),
    reviewReason: nullable(pgText),
    quality: nullable(pgFloat),
    service: nullable(pgFloat),
    trust: nullable(pgFloat),
    failedCriteria: fc.array(nullable(pgText), { maxLength: 4 }).map(pgArray),
    reviewState: nullable(fc.constantFrom('current', 'outdated')),
    labelTokens: fc.array(pgText, { maxLength: 6 }).map(pgArray),
    outcome: outcomeText,
  })
  .map((o) => Object.values(o));

describe("export lines are exactly the listing's representation of the same rows", () => {
  it('an NDJSON line is JSON.stringify(presentConversation(row)) and a newline', () => {
    const siteIdJson = JSON.stringify(SITE_ID);
    fc.assert(
      fc.property(rawRow, (r) => {
        expect(ndjsonLine(r, siteIdJson)).toBe(
          `${JSON.stringify({ ...presentConversation(recordOf(r)), outcome: outcomeOfRow(r) })}\n`,
        );
      }),
      { numRuns: 3000 },
    );
  });

  it('with messages, the line is the list item plus "messages" last', () => {
    const messages = [
      { id: 'msg_1', role: 'shopper', createdAt: '2026-11-01T00:00:00.000Z', rating: null, blocks: [] },
    ];
    fc.assert(
      fc.property(rawRow, (r) => {
        const line = ndjsonLine(r, JSON.stringify(SITE_ID), JSON.stringify(messages));
        expect(line).toBe(
          `${JSON.stringify({ ...presentConversation(recordOf(r)), outcome: outcomeOfRow(r), messages })}\n`,
        );
      }),
      { numRuns: 300 },
    );
  });

  it("a CSV record holds the list item's fields in the documented columns, quoted by csv-stringify", () => {
    fc.assert(
      fc.property(rawRow, (r) => {
        const reference = referenceCsvCells(recordOf(r), outcomeOfRow(r));
        expect(csvCells(r)).toEqual(reference);
        expect(csvRecord(csvCells(r))).toBe(csvText([reference]));
      }),
      { numRuns: 3000 },
    );
  });
});
