import { params } from '../../../common/query/query-params';
import { defineField, singleValuedField } from '../filter-field';

/*
 * `converted` (outcomes-v1 §3): at least one order credited to the conversation has net > 0. The
 * column `conversations.converted` is kept by the transactions that change a credit or an order
 * (src/orders/order-attribution.ts), so both engines read it as a plain condition; no summary
 * (rollup, cell index) knows it, so the planners leave it to the scans.
 */
export const convertedField = defineField({
  key: 'converted',
  example: { converted: 'true' },
  params: {
    converted: {
      ...params.boolean(),
      json: 'boolean',
      doc: {
        description:
          'true: at least one order credited to the conversation has net > 0 (outcomes-v1 §2); false: none has. A boolean in JSON filters.',
        schema: { type: 'boolean' },
      },
    },
  },
  read: (v) => v.converted as boolean | undefined,
  ...singleValuedField('converted'),
  answeredBy: {},
  sql: {
    // Not a column of the covering index: a walk reads the heap for it.
    needsHeap: true,
    rows: (f, p) => (f.converted !== undefined ? [`converted = ${p.add(f.converted)}`] : []),
  },
  openSearch: (f) => ({
    filter: f.converted !== undefined ? [{ term: { converted: f.converted } }] : [],
    mustNot: [],
  }),
});
