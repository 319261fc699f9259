/** Bytes of a chunk: big enough that a write costs little per byte, small enough to stay young. */
export const CHUNK_BYTES = 1 << 20;

/**
 * Text encoded straight into fixed-size byte chunks as it comes (line by line), so an export
 * never builds a batch-sized string (which V8 keeps in its old generation until a full GC) nor
 * copies it once more into a Buffer: memory stays flat and the collector has little to do.
 */
export class ByteChunks {
  private buffer = Buffer.allocUnsafeSlow(CHUNK_BYTES);
  private used = 0;
  private ready: Buffer[] = [];

  add(text: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit: room for that, or a new chunk first.
    const most = text.length * 3;
    if (this.used + most > CHUNK_BYTES) this.close();
    if (most > CHUNK_BYTES) this.ready.push(Buffer.from(text, 'utf8'));
    else this.used += this.buffer.write(text, this.used, 'utf8');
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

  private close(): void {
    if (this.used === 0) return;
    this.ready.push(this.buffer.subarray(0, this.used));
    this.buffer = Buffer.allocUnsafeSlow(CHUNK_BYTES);
    this.used = 0;
  }
}
