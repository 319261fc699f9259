import { describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { messageText, MESSAGE_TEXT_MAX } from '../../src/search/opensearch/transcript-source';
import { engineDatabasePerSuite } from '../setup/engine-database';

const long = (n: number, unit: string) => unit.repeat(n);

/** Blocks as a message may hold them, the odd ones included (the column takes any JSON). */
const CASES: Array<[string, unknown]> = [
  [
    'text blocks',
    [
      { type: 'text', text: 'Where is my order?' },
      { type: 'text', text: 'Quickly' },
    ],
  ],
  [
    'text and product cards, in block order',
    [
      { type: 'text', text: 'Try these' },
      { type: 'product_cards', products: [{ name: 'Red shoe', price: 3 }, { name: 'Blue shoe' }] },
      { type: 'text', text: 'or nothing' },
    ],
  ],
  ['an empty text', [{ type: 'text', text: '' }]],
  [
    'an empty text among others',
    [
      { type: 'text', text: 'a' },
      { type: 'text', text: '' },
    ],
  ],
  ['no blocks', []],
  ['blocks not an array', { type: 'text', text: 'hidden' }],
  ['blocks a string', 'hello'],
  ['elements that are not objects', ['text', 3, null, [{ type: 'text', text: 'nested' }]]],
  ['a text block without text, or a null one', [{ type: 'text' }, { type: 'text', text: null }]],
  [
    'cards without products, products not an array',
    [{ type: 'product_cards' }, { type: 'product_cards', products: { name: 'x' } }],
  ],
  [
    'cards with unnamed products and non-objects',
    [{ type: 'product_cards', products: [{}, 'x', { name: null }, { name: 'Hat' }] }],
  ],
  [
    'a type that is not a string',
    [
      { type: ['text'], text: 'no' },
      { type: 1, text: 'no' },
    ],
  ],
  ['other block types', [{ type: 'image', url: 'https://x', text: 'alt' }]],
  ['unicode and escapes', [{ type: 'text', text: 'élan \u00e9 \ud83d\ude00 tab\tnewline\n"quoted"' }]],
  [
    'a text past the cut, astral characters at the boundary',
    [{ type: 'text', text: long(MESSAGE_TEXT_MAX + 10, '\ud83d\ude00') }],
  ],
  ['a text exactly at the cut', [{ type: 'text', text: long(MESSAGE_TEXT_MAX, 'a') }]],
  [
    'two parts past the cut together',
    [
      { type: 'text', text: long(MESSAGE_TEXT_MAX - 1, 'b') },
      { type: 'text', text: 'cd' },
    ],
  ],
];

/** Values only the SQL function renders (jsonb's text form): messageText leaves them to it. */
const LEFT_TO_SQL: Array<[string, unknown]> = [
  ['a number as text', [{ type: 'text', text: 42 }]],
  ['an object as text', [{ type: 'text', text: { a: 1 } }]],
  ['a boolean as a product name', [{ type: 'product_cards', products: [{ name: true }] }]],
];

/**
 * The searched text of a message, computed in the service (messageText), is the text the SQL
 * function transcript_message_text gives, which the Postgres engine builds its documents with:
 * both engines search the same words. Real Postgres.
 */
describe('a message searched text is the same from messageText as from transcript_message_text', () => {
  let db: DataSource;
  engineDatabasePerSuite((d) => (db = d.dataSource));
  const fromSql = async (blocks: unknown): Promise<string> =>
    (await db.query(`SELECT transcript_message_text($1::jsonb) AS t`, [JSON.stringify(blocks)]))[0].t;

  it.each(CASES)('%s', async (_, blocks) => {
    expect(messageText(blocks)).toBe(await fromSql(blocks));
  });

  it.each(LEFT_TO_SQL)('%s: left to the SQL function', async (_, blocks) => {
    expect(messageText(blocks)).toBeUndefined();
    expect(typeof (await fromSql(blocks))).toBe('string');
  });
});
