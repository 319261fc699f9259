import { describe, expect, it } from '@jest/globals';
import {
  CapturedStatement,
  decodeValue,
  encodeValue,
  FreshIds,
  freshRecording,
  routinePart,
  shapeOf,
  splitRecordings,
  statementPart,
} from './recording-statements';

const st = (text: string, values: CapturedStatement['values'] = [], connection = 1): CapturedStatement => ({
  connection,
  text,
  values,
});

describe('a captured parameter reads back as pg was handed it', () => {
  it('keeps dates, bytes, arrays, objects and scalars through JSON', () => {
    const values = [
      new Date('2026-01-02T03:04:05.678Z'),
      Buffer.from([0, 255, 16]),
      ['a', 'b'],
      [new Date('2026-01-01T00:00:00.000Z')],
      { kind: 'x' },
      null,
      3,
      true,
      'text',
    ];
    const back = (
      JSON.parse(JSON.stringify(values.map(encodeValue))) as Parameters<typeof decodeValue>[0][]
    ).map(decodeValue);
    expect(back).toEqual(values);
    expect(back[0]).toBeInstanceOf(Date);
    expect(Buffer.isBuffer(back[1])).toBe(true);
  });

  it('writes undefined as null', () => {
    expect(encodeValue(undefined)).toBeNull();
  });
});

describe('the capture is split into recordings at each COMMIT', () => {
  it('gives each recording the statements before its transaction and drops what follows the last', () => {
    const captured = [
      st('SELECT 1 FROM api_keys'),
      st('START TRANSACTION'),
      st('INSERT INTO conversations'),
      st('COMMIT'),
      st('START TRANSACTION'),
      st('INSERT INTO conversations'),
      st('COMMIT'),
      st('UPDATE api_keys SET last_used_at = now()'),
    ];
    const recordings = splitRecordings(captured);
    expect(recordings.map((r) => r.map((s) => s.text))).toEqual([
      ['SELECT 1 FROM api_keys', 'START TRANSACTION', 'INSERT INTO conversations', 'COMMIT'],
      ['START TRANSACTION', 'INSERT INTO conversations', 'COMMIT'],
    ]);
    expect(shapeOf(recordings[0])).not.toBe(shapeOf(recordings[1]));
  });

  it('ends a recording at a ROLLBACK too', () => {
    expect(splitRecordings([st('BEGIN'), st('ROLLBACK'), st('BEGIN')])).toHaveLength(1);
  });
});

describe('a replayed recording writes new rows with fresh ids', () => {
  it('replaces an id the same way wherever it occurs: a value, an array, JSON text', () => {
    const ids = new FreshIds();
    const conv = 'conv_0123456789ABCDEFGHIJKL';
    const out = ids.rewrite([conv, [`msg_abc`, `msg_def`], `{"id":"${conv}","site":"site_X1"}`]) as [
      string,
      string[],
      string,
    ];
    expect(out[0]).toMatch(/^conv_[0-9A-Za-z]{22}$/);
    expect(out[0]).not.toBe(conv);
    expect(out[1][0]).toMatch(/^msg_[0-9A-Za-z]{3}$/);
    expect(out[1][0]).not.toBe(out[1][1]);
    expect(JSON.parse(out[2])).toEqual({ id: out[0], site: 'site_X1' });
  });

  it('leaves ids of existing rows (site, organization, agent), dates and bytes as captured', () => {
    const ids = new FreshIds();
    const date = new Date('2026-01-01T00:00:00Z');
    const bytes = Buffer.from('ab');
    expect(ids.rewrite(['site_A', 'org_B', 'agt_C', date, bytes, 7, null])).toEqual([
      'site_A',
      'org_B',
      'agt_C',
      date,
      bytes,
      7,
      null,
    ]);
  });

  it('rewrites ids inside a JSON object parameter', () => {
    const ids = new FreshIds();
    const out = ids.rewrite({ object: { id: 'evt_1' } }) as { object: { id: string } };
    expect(out.object.id).toMatch(/^evt_[0-9A-Za-z]$/);
    expect(out.object.id).toBe(ids.idFor('evt_1'));
  });

  it('draws new ids for every replay, consistent across its statements', () => {
    const recording = [
      st('INSERT INTO conversations', ['conv_AAAA']),
      st('INSERT INTO messages', ['conv_AAAA', { $date: '2026-01-01T00:00:00.000Z' }]),
    ];
    const a = freshRecording(recording);
    const b = freshRecording(recording);
    expect(a[0].values[0]).toBe(a[1].values[0]);
    expect(a[0].values[0]).not.toBe(b[0].values[0]);
    expect(a[1].values[1]).toEqual(new Date('2026-01-01T00:00:00.000Z'));
    expect(a[0].text).toBe('INSERT INTO conversations');
  });
});

describe('statements and routines are named by the part of a recording they serve', () => {
  const partOf = { statement: statementPart, routine: routinePart };
  it.each<[keyof typeof partOf, string, string]>([
    ['statement', 'START TRANSACTION', 'transaction (BEGIN, COMMIT)'],
    ['statement', 'COMMIT', 'transaction (BEGIN, COMMIT)'],
    ['statement', 'SELECT refresh_conversation_transcripts($1::text[])', 'transcript'],
    ['statement', 'INSERT INTO events (id, type) VALUES ($1, $2)', 'events'],
    [
      'statement',
      'WITH base AS (SELECT message_count AS n FROM conversations WHERE id = $1)\n INSERT INTO messages (id)',
      'messages (insert)',
    ],
    ['statement', 'SELECT id, role FROM messages WHERE conversation_id = $1', 'messages (read back)'],
    ['statement', 'INSERT INTO conversations (id) VALUES ($1)', 'conversation row (insert)'],
    [
      'statement',
      'UPDATE conversations SET message_count = message_count + $2',
      'conversation row (counters)',
    ],
    ['statement', 'SELECT id, title FROM conversations WHERE id = $1', 'conversation row (read back)'],
    ['statement', 'SELECT redaction_patterns FROM sites WHERE id = $1', 'site and key'],
    ['routine', 'refresh_conversation_transcripts', 'transcript'],
    ['routine', 'conversation_postings_on_insert', 'postings'],
    ['routine', 'conversation_stats_groups_on_insert', 'rollups'],
    ['routine', 'conversation_stats_quarter_on_insert', 'rollups'],
    ['routine', 'conversations_search_outbox', 'outbox'],
    ['routine', 'conversations_search_version', 'outbox'],
    ['routine', 'search_outbox_notify', 'outbox'],
    ['routine', 'events_register_commit', 'events'],
    ['routine', 'event_commits_stamp', 'events'],
    ['routine', 'something_else', 'other triggers'],
  ])('%s %s → %s', (kind, name, part) => {
    expect(partOf[kind](name)).toBe(part);
  });
});
