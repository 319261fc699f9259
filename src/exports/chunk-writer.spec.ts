import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { ChunkWriter } from './chunk-writer';

/** A storage stream whose writes complete only when the test says so. */
function slowStorage() {
  const written: Buffer[] = [];
  const pending: Array<(error?: Error) => void> = [];
  const stream = new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _encoding, done) {
      written.push(Buffer.from(chunk));
      pending.push(done);
    },
  });
  const completeOne = async () => {
    pending.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { stream, written, pending, completeOne };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('chunk writer: every chunk written, hashed and counted; a chunk given back only once the storage wrote it', () => {
  it('the bytes and sha256 are those of the chunks in order; each chunk is released after its write', async () => {
    const storage = slowStorage();
    const released: Buffer[] = [];
    const writer = new ChunkWriter(storage.stream, (chunk) => released.push(chunk), 8);
    const chunks = ['one\n', 'two\n', 'three\n'].map((t) => Buffer.from(t));
    writer.write(chunks);
    await tick();
    expect(released).toEqual([]);
    await storage.completeOne();
    expect(released).toEqual([chunks[0]]);
    await storage.completeOne();
    await storage.completeOne();
    const ending = writer.end();
    await tick();
    await storage.completeOne();
    const result = await ending;
    expect(released).toEqual(chunks);
    expect(Buffer.concat(storage.written).toString()).toBe('one\ntwo\nthree\n');
    expect(result).toEqual({
      bytes: 14,
      sha256: createHash('sha256').update('one\ntwo\nthree\n').digest('hex'),
    });
  });

  it('ready() waits while more than maxInFlight chunks wait for the storage', async () => {
    const storage = slowStorage();
    const writer = new ChunkWriter(storage.stream, () => undefined, 1);
    writer.write([Buffer.from('a'), Buffer.from('b'), Buffer.from('c')]);
    let ready = false;
    void writer.ready().then(() => (ready = true));
    await tick();
    expect(ready).toBe(false);
    await storage.completeOne();
    expect(ready).toBe(false);
    await storage.completeOne();
    expect(ready).toBe(true);
  });

  it('a failing storage fails ready() and end(); the failed chunk is not released', async () => {
    const storage = slowStorage();
    const released: Buffer[] = [];
    const writer = new ChunkWriter(storage.stream, (chunk) => released.push(chunk), 0);
    writer.write([Buffer.from('a')]);
    const waiting = writer.ready();
    storage.pending.shift()?.(new Error('disk full'));
    await expect(waiting).rejects.toThrow('disk full');
    await expect(writer.end()).rejects.toThrow('disk full');
    expect(released).toEqual([]);
  });

  it('the source is paused while more than maxInFlight chunks wait, resumed once written or destroyed', async () => {
    const storage = slowStorage();
    const calls: string[] = [];
    const source = { pause: () => calls.push('pause'), resume: () => calls.push('resume') };
    const writer = new ChunkWriter(storage.stream, () => undefined, 1, source);
    writer.write([Buffer.from('a')]);
    expect(calls).toEqual([]);
    writer.write([Buffer.from('b')]);
    writer.write([Buffer.from('c')]);
    expect(calls).toEqual(['pause']);
    await storage.completeOne();
    expect(calls).toEqual(['pause']);
    await storage.completeOne();
    expect(calls).toEqual(['pause', 'resume']);
    writer.write([Buffer.from('d'), Buffer.from('e')]);
    expect(calls).toEqual(['pause', 'resume', 'pause']);
    writer.destroy();
    expect(calls).toEqual(['pause', 'resume', 'pause', 'resume']);
  });
});
