import { createHash } from 'node:crypto';

/** Feistel rounds: eight keyed rounds mix every bit of a 32-bit domain several times over. */
const ROUNDS = 8;

/** A 32-bit integer hash with full avalanche (Chris Wellons' "lowbias32"). */
function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  return x ^ (x >>> 16);
}

/**
 * A pseudo-random permutation of the ranks [0, n), keyed by SHA-256(seed) (review samples,
 * workflows-v1 §2): `at(j)` is the rank drawn j-th, `indexOf(rank)` the draw that yields it.
 * Drawing at(0), at(1), … is drawing ranks uniformly without replacement, and either direction
 * costs a few multiplications, so a sample can be drawn forward (the first ranks) or found
 * backward (the draw of each known rank) with the same answer.
 *
 * A balanced Feistel network over the smallest even number of bits holding n, keyed by eight
 * 32-bit words of the seed's SHA-256, with cycle walking (a value outside [0, n) is permuted
 * again until it falls inside): a bijection of [0, n) whatever n, in fewer than four rounds
 * of walking on average (the domain is less than 4n).
 */
export class SeedPermutation {
  private readonly keys: Int32Array;
  private readonly half: number;
  private readonly mask: number;

  constructor(
    seed: string,
    readonly n: number,
  ) {
    if (!Number.isInteger(n) || n < 0 || n > 2 ** 32) throw new RangeError(`n out of range: ${n}`);
    const digest = createHash('sha256').update(seed, 'utf8').digest();
    this.keys = Int32Array.from({ length: ROUNDS }, (_, i) => digest.readInt32BE(4 * i));
    const bits = Math.max(2, Math.ceil(Math.log2(Math.max(n, 2))));
    this.half = Math.ceil(bits / 2);
    this.mask = 2 ** this.half - 1;
  }

  /** The rank drawn j-th, 0 ≤ j < n. */
  at(j: number): number {
    if (this.n <= 1) return j;
    let v = this.encrypt(j);
    while (v >= this.n) v = this.encrypt(v);
    return v;
  }

  /** The draw yielding `rank`, 0 ≤ rank < n: at(indexOf(rank)) = rank. */
  indexOf(rank: number): number {
    if (this.n <= 1) return rank;
    let v = this.decrypt(rank);
    while (v >= this.n) v = this.decrypt(v);
    return v;
  }

  private encrypt(v: number): number {
    const { half, mask, keys } = this;
    let left = v >>> half;
    let right = v & mask;
    for (let i = 0; i < ROUNDS; i++) {
      const next = (left ^ mix32(right ^ keys[i])) & mask;
      left = right;
      right = next;
    }
    return ((left << half) | right) >>> 0;
  }

  private decrypt(v: number): number {
    const { half, mask, keys } = this;
    let left = v >>> half;
    let right = v & mask;
    for (let i = ROUNDS - 1; i >= 0; i--) {
      const previous = (right ^ mix32(left ^ keys[i])) & mask;
      right = left;
      left = previous;
    }
    return ((left << half) | right) >>> 0;
  }
}
