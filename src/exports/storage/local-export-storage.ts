import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type { ByteRange, ExportStorage, StorageUpload } from './export-storage';

const PARTIAL = '.partial-';

/** Bytes read at a time when hashing a written file. */
const HASH_READ_BYTES = 1 << 20;

/**
 * The sha256 of a file, read into one reused buffer: a read stream allocates a new 64 KiB Buffer
 * per read, external memory that piled up (about 30 MiB of resident size) until a full collection.
 */
async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafeSlow(HASH_READ_BYTES);
  const handle = await open(path, 'r');
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, HASH_READ_BYTES, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}

/** Export files in a local directory (EXPORT_DIR): written as `<name>.partial-<random>`, then renamed. */
export class LocalExportStorage implements ExportStorage {
  readonly kind = 'local' as const;
  private readonly root: string;

  constructor(dir: string) {
    this.root = resolve(dir);
  }

  private path(key: string): string {
    const path = resolve(this.root, key);
    // Keys are built by the service, never taken from a request; still, stay inside the root.
    if (!path.startsWith(this.root + '/')) throw new Error(`export key outside the export directory: ${key}`);
    return path;
  }

  async open(key: string): Promise<StorageUpload> {
    const final = this.path(key);
    await mkdir(dirname(final), { recursive: true });
    const temp = `${final}${PARTIAL}${randomBytes(6).toString('hex')}`;
    const stream = createWriteStream(temp, { flags: 'wx' });
    await new Promise<void>((done, fail) => stream.once('open', () => done()).once('error', fail));
    const abort = () => rm(temp, { force: true });
    return {
      stream,
      abort,
      publish: async (expected) => {
        try {
          const written = await stat(temp);
          const sha256 = await sha256Of(temp);
          if (written.size !== expected.bytes || sha256 !== expected.sha256)
            throw new Error(
              `export file check failed: ${written.size} bytes, sha256 ${sha256}; expected ${expected.bytes}, ${expected.sha256}`,
            );
          // Durable before it becomes visible: a crash after the rename never leaves a short file.
          const handle = await open(temp, 'r');
          await handle.sync().finally(() => handle.close());
          await rename(temp, final);
        } catch (error) {
          await abort();
          throw error;
        }
      },
    };
  }

  async removePartials(key: string): Promise<void> {
    const final = this.path(key);
    const prefix = `${basename(final)}${PARTIAL}`;
    const names = await readdir(dirname(final)).catch(() => [] as string[]);
    await Promise.all(
      names.filter((n) => n.startsWith(prefix)).map((n) => rm(join(dirname(final), n), { force: true })),
    );
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const path = this.path(key);
    const stream = createReadStream(path, range ? { start: range.start, end: range.end } : {});
    // Opening errors (a file removed meanwhile) surface here, before any byte is answered.
    await new Promise<void>((done, fail) => stream.once('open', () => done()).once('error', fail));
    return stream;
  }

  async remove(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }
}
