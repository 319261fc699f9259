import type { Readable, Writable } from 'node:stream';

/** A file being written under a temporary name: nothing is visible under its key before publish(). */
export interface StorageUpload {
  /**
   * Where the bytes go; end it, then call publish() (or abort()). The writer reuses a chunk's
   * memory once the chunk's write callback has run: a storage that keeps chunks longer (in a
   * queue, a multipart part) copies them.
   */
  readonly stream: Writable;
  /**
   * Checks the written file against what the writer counted (`bytes`, and the sha256 where the
   * storage can recompute it cheaply), then makes it visible under its key, replacing any file.
   * Throws, and removes the temporary file, when the check fails.
   */
  publish(expected: { bytes: number; sha256: string }): Promise<void>;
  /** Removes the temporary file (idempotent). */
  abort(): Promise<void>;
}

export interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

/**
 * Where export files live: a local directory (default) or an S3-compatible bucket. Keys are
 * relative names such as `site_…/exp_….csv`.
 */
export interface ExportStorage {
  readonly kind: 'local' | 's3';
  /** Starts writing the file of `key` under a temporary name. */
  open(key: string): Promise<StorageUpload>;
  /** Removes temporary files a dead writer of `key` may have left. */
  removePartials(key: string): Promise<void>;
  /** The published file's bytes (a range of them when given). */
  read(key: string, range?: ByteRange): Promise<Readable>;
  /** Removes the published file (no error when absent). */
  remove(key: string): Promise<void>;
}

/** Injection token of the configured ExportStorage. */
export const EXPORT_STORAGE = Symbol('ExportStorage');
