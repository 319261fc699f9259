import { LABEL_BITS } from '../../../database/stats-rollups';
import { countBits } from './stats-parts';

/** The bits set in `bits`, by BigInt (the reference). */
function reference(bits: bigint, n: number): number[] {
  return Array.from({ length: LABEL_BITS }, (_, b) => ((bits >> BigInt(b)) & 1n ? n : 0));
}

describe('countBits (labels facet of a scan: matches per token from label_bits)', () => {
  it('adds n to each bit set, the sign bit of 32 bits included', () => {
    const counts = new Array<number>(LABEL_BITS).fill(0);
    countBits(counts, String(2 ** 31 + 2 ** 5 + 1), 7);
    expect(counts[0]).toBe(7);
    expect(counts[5]).toBe(7);
    expect(counts[31]).toBe(7);
    expect(counts.reduce((s, c) => s + c, 0)).toBe(21);
  });

  it('sums over rows', () => {
    const counts = new Array<number>(LABEL_BITS).fill(0);
    countBits(counts, '3', 2);
    countBits(counts, '2', 5);
    expect(counts.slice(0, 3)).toEqual([2, 7, 0]);
  });

  it('agrees with BigInt on values above 2^32, above 2^53 and negative (two’s complement)', () => {
    for (const bits of [2n ** 32n + 9n, 2n ** 40n - 1n, 2n ** 60n + 2n ** 31n + 4n, -1n, -(2n ** 31n)]) {
      const counts = new Array<number>(LABEL_BITS).fill(0);
      countBits(counts, bits.toString(), 3);
      expect(counts).toEqual(reference(bits, 3));
    }
  });

  it('agrees with BigInt on random 32-bit values', () => {
    for (let i = 0; i < 500; i++) {
      const bits = BigInt(Math.floor(Math.random() * 2 ** 32));
      const counts = new Array<number>(LABEL_BITS).fill(0);
      countBits(counts, bits.toString(), 1);
      expect(counts).toEqual(reference(bits, 1));
    }
  });
});
