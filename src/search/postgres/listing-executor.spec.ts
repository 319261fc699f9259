import { describe, expect, it } from '@jest/globals';
import { furtherWindow } from './listing-executor';

describe('furtherWindow (walk on while the rest of the page is expected close by)', () => {
  it('walks 1.5 times the rows the rest of the page is expected in, at most `further`', () => {
    // 10 of 26 in 2,000 rows: 16 more expected within 3,200 rows.
    expect(furtherWindow(10, 26, 2000, 30_000)).toBe(4800);
    expect(furtherWindow(1, 26, 2000, 60_000)).toBe(60_000);
  });

  it('turns to the GIN index when the rest is expected beyond `further`, or nothing matched yet', () => {
    expect(furtherWindow(1, 26, 2000, 30_000)).toBeUndefined();
    expect(furtherWindow(0, 26, 2000, 30_000)).toBeUndefined();
  });
});
