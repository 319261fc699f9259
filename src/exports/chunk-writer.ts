import { createHash } from 'node:crypto';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';

/**
 * Writes an export's chunks into the storage's stream, hashing and counting them as they go, and
 * hands each chunk to `release` once the stream has written it (its write callback: the storage
 * holds no reference to it any more, see StorageUpload.stream), so the chunk's memory is reused.
 * The producer asks ready() before reading more rows: at most `maxInFlight` chunks wait for the
 * storage, and the database is read only as fast as the storage takes the bytes.
 */
export class ChunkWriter {
  private readonly hash = createHash('sha256');
  private bytes = 0;
  private inFlight = 0;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;
  private readonly finished: Promise<void>;
  private paused = false;

  /**
   * `source`, when given, is paused while more than maxInFlight chunks wait for the storage and
   * resumed once they are written: backpressure in the middle of a read (the socket of the
   * database connection: PostgreSQL then waits on TCP).
   */
  constructor(
    private readonly stream: Writable,
    private readonly release: (chunk: Buffer) => void,
    private readonly maxInFlight = 2,
    private readonly source?: { pause(): unknown; resume(): unknown },
  ) {
    this.finished = finished(stream);
    // Also listens for 'error', so a failing storage is never an unhandled error event.
    this.finished.catch((error: Error) => this.fail(error));
  }

  write(chunks: Buffer[]): void {
    for (const chunk of chunks) {
      if (this.failure) return;
      this.hash.update(chunk);
      this.bytes += chunk.length;
      this.inFlight++;
      this.stream.write(chunk, (error) => {
        this.inFlight--;
        if (error) this.fail(error);
        else this.release(chunk);
        this.notify();
      });
    }
    if (this.source && !this.paused && this.inFlight > this.maxInFlight) {
      this.paused = true;
      this.source.pause();
    }
  }

  /** Resolves once at most maxInFlight chunks wait for the storage; rejects when it failed. */
  async ready(): Promise<void> {
    while (!this.failure && this.inFlight > this.maxInFlight)
      await new Promise<void>((resolve) => (this.wake = resolve));
    if (this.failure) throw this.failure;
  }

  /** Ends the stream once everything is written; the byte count and sha256 of what was written. */
  async end(): Promise<{ bytes: number; sha256: string }> {
    if (this.failure) throw this.failure;
    this.stream.end();
    await this.finished;
    if (this.failure) throw this.failure;
    return { bytes: this.bytes, sha256: this.hash.digest('hex') };
  }

  /** Stops the stream (the export failed or was lost): nothing more is written; the source flows. */
  destroy(): void {
    if (!this.stream.destroyed) this.stream.destroy();
    this.unpause();
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.notify();
  }

  private unpause(): void {
    if (!this.paused) return;
    this.paused = false;
    this.source?.resume();
  }

  private notify(): void {
    if (this.failure || this.inFlight <= this.maxInFlight) this.unpause();
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
