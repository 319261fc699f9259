/**
 * The statements the service sends for one recording (`npm run bench:recording`), as captured
 * from the service itself by bench/lib/recording-probe.ts, and how they are replayed through a
 * plain pool: the same texts, in the same transaction shape, with fresh ids for every new row.
 */
import { randomBytes } from 'node:crypto';

/** A statement's parameter as the probe writes it: JSON, with dates and bytes tagged. */
export type EncodedValue =
  | null
  | boolean
  | number
  | string
  | { $date: string }
  | { $bytes: string }
  | EncodedValue[]
  | { $json: unknown };

/** One statement a pg client of the service sent: on which of its connections, its text and values. */
export interface CapturedStatement {
  /** The service process's own number for the pg connection (its n-th client). */
  connection: number;
  text: string;
  values: EncodedValue[];
}

/** A parameter, written so that it reads back as pg would have been handed it. */
export function encodeValue(value: unknown): EncodedValue {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return { $date: value.toISOString() };
  if (Buffer.isBuffer(value)) return { $bytes: value.toString('hex') };
  if (Array.isArray(value)) return value.map(encodeValue);
  if (typeof value === 'object') return { $json: value };
  if (typeof value === 'boolean' || typeof value === 'number' || typeof value === 'string') return value;
  return String(value);
}

export function decodeValue(value: EncodedValue): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(decodeValue);
  if ('$date' in value) return new Date(value.$date);
  if ('$bytes' in value) return Buffer.from(value.$bytes, 'hex');
  return value.$json;
}

const TRANSACTION_START = /^\s*(BEGIN|START TRANSACTION)\b/i;
const TRANSACTION_END = /^\s*(COMMIT|ROLLBACK)\b/i;

export const startsTransaction = (text: string): boolean => TRANSACTION_START.test(text);
export const endsTransaction = (text: string): boolean => TRANSACTION_END.test(text);

/**
 * The captured statements split into recordings: each recording is what was sent up to and
 * including a COMMIT or ROLLBACK (the statements outside a transaction before it included), in
 * the order sent. Statements after the last transaction's end belong to no recording and are
 * left out.
 */
export function splitRecordings(statements: CapturedStatement[]): CapturedStatement[][] {
  const recordings: CapturedStatement[][] = [];
  let current: CapturedStatement[] = [];
  for (const st of statements) {
    current.push(st);
    if (endsTransaction(st.text)) {
      recordings.push(current);
      current = [];
    }
  }
  return recordings;
}

/** The texts of a recording, in order: two recordings with the same shape send the same statements. */
export const shapeOf = (recording: CapturedStatement[]): string => recording.map((s) => s.text).join('\n;\n');

/**
 * The prefixes of the ids a recording creates (src/common/ids/ids.ts): the conversation, its
 * messages, its event, an audit row. Ids of other prefixes (the site, the organization, the
 * agent) name rows that exist and stay as captured.
 */
export const FRESH_ID_PREFIXES = ['conv', 'msg', 'evt', 'aud', 'idem', 'lbl', 'req'] as const;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function randomBase62(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[bytes[i] % 62];
  return out;
}

/**
 * Rewrites the ids of new rows in a recording's values: every id of a prefix in `prefixes`
 * (`conv_…`, `msg_…`, wherever it occurs: a parameter, an element of an array, inside JSON
 * text) becomes a fresh one of the same prefix and length, the same one wherever the captured
 * id occurred, so a replay inserts new rows that refer to each other as the captured ones did.
 */
export class FreshIds {
  private readonly pattern: RegExp;
  private readonly mapping = new Map<string, string>();

  constructor(prefixes: readonly string[] = FRESH_ID_PREFIXES) {
    this.pattern = new RegExp(`\\b(${prefixes.join('|')})_([0-9A-Za-z]+)\\b`, 'g');
  }

  /** The fresh id standing for `id` in this recording. */
  idFor(id: string): string {
    let fresh = this.mapping.get(id);
    if (!fresh) {
      const at = id.indexOf('_');
      fresh = `${id.slice(0, at)}_${randomBase62(id.length - at - 1)}`;
      this.mapping.set(id, fresh);
    }
    return fresh;
  }

  rewriteText(text: string): string {
    return text.replace(this.pattern, (id) => this.idFor(id));
  }

  /** A decoded value with its ids rewritten (strings, arrays, JSON objects; dates and bytes kept). */
  rewrite(value: unknown): unknown {
    if (typeof value === 'string') return this.rewriteText(value);
    if (Array.isArray(value)) return value.map((v) => this.rewrite(v));
    if (value === null || typeof value !== 'object' || value instanceof Date || Buffer.isBuffer(value))
      return value;
    return JSON.parse(this.rewriteText(JSON.stringify(value))) as unknown;
  }
}

/** A statement ready to replay: its text and its decoded values. */
export interface ReplayStatement {
  text: string;
  values: unknown[];
}

/** The statements of one replayed recording: the captured ones with fresh ids (one FreshIds per recording). */
export function freshRecording(recording: CapturedStatement[]): ReplayStatement[] {
  const ids = new FreshIds();
  return recording.map((st) => ({
    text: st.text,
    values: st.values.map((v) => ids.rewrite(decodeValue(v))),
  }));
}

/**
 * What a statement of the recording writes or reads, for the per-part table: its first table
 * or function, named by the part of a recording it serves.
 */
export function statementPart(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim();
  if (startsTransaction(t) || endsTransaction(t)) return 'transaction (BEGIN, COMMIT)';
  if (/refresh_conversation_transcripts|conversation_transcripts/i.test(t)) return 'transcript';
  if (/conversation_postings/i.test(t)) return 'postings';
  if (/conversation_stats_/i.test(t)) return 'rollups';
  if (/search_outbox/i.test(t)) return 'outbox';
  if (/\bevents\b/i.test(t)) return 'events';
  if (/^INSERT INTO messages|^WITH base AS .* INSERT INTO messages/i.test(t)) return 'messages (insert)';
  if (/^SELECT .* FROM messages/i.test(t)) return 'messages (read back)';
  if (/^INSERT INTO conversations/i.test(t)) return 'conversation row (insert)';
  if (/^UPDATE conversations/i.test(t)) return 'conversation row (counters)';
  if (/^SELECT .* FROM conversations/i.test(t)) return 'conversation row (read back)';
  if (/\b(sites|api_keys|organizations)\b/i.test(t)) return 'site and key';
  if (/\borders\b|attribution/i.test(t)) return 'orders (attribution)';
  if (/\baudit/i.test(t)) return 'audit';
  return 'other';
}

/**
 * The part of a recording a trigger or function serves, by its name (the migrations' names:
 * `conversation_postings_*`, `*_stats_*` rollups, `events_*`, `*search_outbox*`,
 * `conversations_search_version`, `refresh_conversation_transcripts`).
 */
export function routinePart(name: string): string {
  if (/transcript/i.test(name)) return 'transcript';
  if (/posting/i.test(name)) return 'postings';
  if (/stats|rollup/i.test(name)) return 'rollups';
  if (/outbox|search_version/i.test(name)) return 'outbox';
  if (/event/i.test(name)) return 'events';
  return 'other triggers';
}
