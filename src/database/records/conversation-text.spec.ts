import { C, LISTED_TEXT_COLUMNS, ListedText, rawRowOf } from './conversation-text';

describe('listing rows as text: rawRowOf puts each named column where listItemJson reads it', () => {
  it('every column of the list item, in the order of C (the label tokens, not listed, excepted)', () => {
    const names = Object.keys(C).filter((key) => Number.isNaN(Number(key)) && key !== 'labelTokens');
    const row = Object.fromEntries(names.map((name) => [name, `value of ${name}`])) as unknown as ListedText;
    const raw = rawRowOf(row);
    expect(raw).toHaveLength(C.labelTokens);
    for (const name of names) expect(raw[C[name as keyof typeof C]]).toBe(`value of ${name}`);
  });

  it('the SELECT list names each column as the row reads it, the text array as it is (no to_json)', () => {
    expect(LISTED_TEXT_COLUMNS.split(', ')).toHaveLength(C.labelTokens);
    expect(LISTED_TEXT_COLUMNS).toContain('created_at AS "createdAt"');
    expect(LISTED_TEXT_COLUMNS).toContain('page_product_id AS "productId"');
    expect(LISTED_TEXT_COLUMNS).toMatch(
      /, failed_criteria AS "failedCriteria", review_state AS "reviewState"$/,
    );
  });
});
