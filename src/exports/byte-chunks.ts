/** Bytes of a chunk: big enough that a write costs little per byte, small enough to stay young. */
export const CHUNK_BYTES = 1 << 20;

/** Chunks kept for reuse at most (more are only ever in flight when the storage falls behind). */
const SPARE_CHUNKS = 8;

/**
 * Text encoded straight into fixed-size byte chunks as it comes (line by line), so an export
 * never builds a batch-sized string (which V8 keeps in its old generation until a full GC) nor
 * copies it once more into a Buffer. A chunk given back with release() once the storage has
 * written it is filled again: a fresh 1 MiB Buffer per chunk would be external memory that only
 * a full collection frees (its small Buffer object is promoted while the chunk fills), which let
 * up to 60 MiB of written chunks pile up between full collections.
 */
export class ByteChunks {
  /** The chunks this instance allocated (whole), by their memory: release() takes back only those. */
  private readonly own = new WeakMap<ArrayBufferLike, Buffer>();
  private readonly spare: Buffer[] = [];
  private buffer = this.fresh();
  private used = 0;
  private ready: Buffer[] = [];

  add(text: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit: room for that, or a new chunk first.
    const most = text.length * 3;
    if (this.used + most > CHUNK_BYTES) this.close();
    if (most > CHUNK_BYTES) this.ready.push(Buffer.from(text, 'utf8'));
    else this.used += this.buffer.write(text, this.used, 'utf8');
  }

  /** Whether a chunk is filled and not taken yet. */
  get filled(): boolean {
    return this.ready.length > 0;
  }

  /** The chunks filled so far (each given once). */
  take(): Buffer[] {
    const ready = this.ready;
    this.ready = [];
    return ready;
  }

  /** Closes the current chunk and gives every chunk not taken yet. */
  end(): Buffer[] {
    this.close();
    return this.take();
  }

  /**
   * Gives back a chunk nobody reads any more (the storage has written it): a later chunk reuses
   * its memory. A chunk must be released at most once, and not read after.
   */
  release(chunk: Buffer): void {
    const whole = this.own.get(chunk.buffer);
    if (!whole || whole === this.buffer || this.spare.includes(whole)) return;
    if (this.spare.length < SPARE_CHUNKS) this.spare.push(whole);
  }

  private close(): void {
    if (this.used === 0) return;
    this.ready.push(this.buffer.subarray(0, this.used));
    this.buffer = this.spare.pop() ?? this.fresh();
    this.used = 0;
  }

  private fresh(): Buffer {
    const buffer = Buffer.allocUnsafeSlow(CHUNK_BYTES);
    this.own.set(buffer.buffer, buffer);
    return buffer;
  }
}
