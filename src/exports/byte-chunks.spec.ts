import fc from 'fast-check';
import { ByteChunks, CHUNK_BYTES } from './byte-chunks';

describe('byte chunks: the text, encoded as UTF-8, in chunks of at most 1 MiB (a longer line whole)', () => {
  it('the chunks put together are the UTF-8 of everything added, in order', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string({ unit: 'binary', maxLength: 50 }),
            fc.constantFrom('é'.repeat(200_000), 'a'.repeat(400_000), '😀'.repeat(100_000)),
          ),
          { maxLength: 30 },
        ),
        (texts) => {
          const out = new ByteChunks();
          const chunks: Buffer[] = [];
          for (const text of texts) {
            out.add(text);
            chunks.push(...out.take());
          }
          chunks.push(...out.end());
          expect(Buffer.concat(chunks).equals(Buffer.from(texts.join(''), 'utf8'))).toBe(true);
          for (const chunk of chunks) expect(chunk.length).toBeGreaterThan(0);
          // Only a line longer than a chunk makes a chunk longer than CHUNK_BYTES.
          const longest = Math.max(0, ...texts.map((t) => Buffer.byteLength(t)));
          for (const chunk of chunks)
            expect(chunk.length).toBeLessThanOrEqual(Math.max(CHUNK_BYTES, longest));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a chunk is given once', () => {
    const out = new ByteChunks();
    out.add('x'.repeat(300_000));
    out.add('y'.repeat(300_000)); // might need 900,000 bytes: the first chunk is closed
    expect(out.take().map((c) => c.toString())).toEqual(['x'.repeat(300_000)]);
    expect(out.take()).toEqual([]);
    expect(out.end().map((c) => c.toString())).toEqual(['y'.repeat(300_000)]);
    expect(out.end()).toEqual([]);
  });
});
