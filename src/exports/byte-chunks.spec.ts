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

describe('byte chunks: a chunk given back once written is filled again, never a fresh Buffer each time', () => {
  it('a released chunk lends its memory to a later chunk; the bytes given out are still exact', () => {
    const out = new ByteChunks();
    const seen = new Set<ArrayBufferLike>();
    const texts: string[] = [];
    const written: Buffer[] = [];
    for (let i = 0; i < 40; i++) {
      const text = `${i}:${'é'.repeat(100_000 + i)}\n`;
      texts.push(text);
      out.add(text);
      for (const chunk of out.take()) {
        seen.add(chunk.buffer);
        written.push(Buffer.from(chunk)); // what the storage wrote
        out.release(chunk);
      }
    }
    for (const chunk of out.end()) written.push(Buffer.from(chunk));
    expect(Buffer.concat(written).equals(Buffer.from(texts.join(''), 'utf8'))).toBe(true);
    expect(written.length).toBeGreaterThan(5);
    // The chunk being filled and the one just given back: two memories in all.
    expect(seen.size).toBeLessThanOrEqual(2);
  });

  it('without release every chunk is new memory; a foreign or repeated release changes nothing', () => {
    const out = new ByteChunks();
    const buffers = new Set<ArrayBufferLike>();
    for (let i = 0; i < 6; i++) {
      out.add('z'.repeat(300_000));
      for (const chunk of out.take()) buffers.add(chunk.buffer);
    }
    expect(buffers.size).toBe(5);
    out.release(Buffer.alloc(10));
    const [first] = out.end();
    out.release(first);
    out.release(first);
    // Closing `first` already took the next chunk's memory: the one after reuses `first`'s.
    for (const letter of 'abcd') out.add(letter.repeat(300_000));
    const [a, b, c] = out.take();
    expect(b.buffer === first.buffer).toBe(true);
    expect(a.buffer === first.buffer || c.buffer === first.buffer).toBe(false);
    expect([a, b, c].map((chunk) => chunk.toString())).toEqual(['a', 'b', 'c'].map((l) => l.repeat(300_000)));
  });
});
