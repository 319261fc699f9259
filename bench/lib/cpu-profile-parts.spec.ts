import { describe, expect, it } from '@jest/globals';
import { CpuProfile, framePart, partsPerRecording, profileParts } from './cpu-profile-parts';

const frame = (functionName: string, url = '') => ({ functionName, url });

describe('a frame belongs to the part its source says', () => {
  it.each([
    ['/work/x/node_modules/pg-protocol/dist/parser.js', 'pg driver (pg, TypeORM)'],
    ['file:///work/x/node_modules/typeorm/driver/postgres/PostgresQueryRunner.js', 'pg driver (pg, TypeORM)'],
    [
      '/work/x/node_modules/class-validator/cjs/validation/ValidationExecutor.js',
      'validation (class-validator, class-transformer)',
    ],
    [
      '/work/x/node_modules/class-transformer/cjs/TransformOperationExecutor.js',
      'validation (class-validator, class-transformer)',
    ],
    ['/work/x/node_modules/body-parser/lib/types/json.js', 'JSON parsing (body)'],
    ['/work/x/node_modules/pino/lib/proto.js', 'logging (pino)'],
    ['/work/x/node_modules/ioredis/built/Redis.js', 'Redis client (rate limit)'],
    ['/work/x/dist/events/events.writer.js', 'events'],
    ['/work/x/dist/conversations/conversation-events.js', 'events'],
    ['/work/x/dist/redaction/redaction-patterns.js', 'transcript (messages: redaction, blocks)'],
    ['/work/x/dist/conversations/conversation.presenter.js', 'presenting the answer'],
    ['/work/x/dist/conversations/conversations.service.js', 'service code (other)'],
    [
      '/work/x/node_modules/@nestjs/core/router/router-execution-context.js',
      'HTTP + framework (Node http, Express, Nest)',
    ],
    ['/work/x/node_modules/express/lib/response.js', 'HTTP + framework (Node http, Express, Nest)'],
  ])('%s → %s', (url, part) => {
    expect(framePart(frame('f', url))).toBe(part);
  });

  it("has no part for Node's own frames and builtins: their caller's is taken", () => {
    expect(framePart(frame('writev', 'node:internal/stream_base_commons'))).toBeUndefined();
    expect(framePart(frame('parse'))).toBeUndefined();
  });

  it('knows the profiler pseudo-frames', () => {
    expect(framePart(frame('(idle)'))).toBe('idle');
    expect(framePart(frame('(garbage collector)'))).toBe('garbage collection');
    expect(framePart(frame('(program)'))).toBe('other (runtime, native)');
  });
});

describe("a sample's time goes to the innermost frame of its stack with a part", () => {
  // (root) → express handler → JSON.stringify (builtin); (root) → pg parser → node:buffer;
  // (root) → node:_http_server; (root) → node:timers; (idle); GC.
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame('(root)'), children: [2, 4, 6, 7, 8, 9] },
      { id: 2, callFrame: frame('handle', '/a/node_modules/express/lib/router.js'), children: [3] },
      { id: 3, callFrame: frame('stringify') },
      { id: 4, callFrame: frame('parse', '/a/node_modules/pg-protocol/dist/parser.js'), children: [5] },
      { id: 5, callFrame: frame('toString', 'node:buffer') },
      { id: 6, callFrame: frame('parserOnHeadersComplete', 'node:_http_common') },
      { id: 7, callFrame: frame('listOnTimeout', 'node:internal/timers') },
      { id: 8, callFrame: frame('(idle)') },
      { id: 9, callFrame: frame('(garbage collector)') },
    ],
    samples: [3, 5, 5, 6, 7, 8, 9],
    // Each sample's time is the delta to the next one.
    timeDeltas: [0, 100, 200, 300, 400, 500, 600],
  };

  it('charges builtins to their caller, Node frames alone to the HTTP server or the runtime, and leaves idle out', () => {
    const parts = profileParts([profile]);
    expect(parts['HTTP + framework (Node http, Express, Nest)']).toBe(100 + 400);
    expect(parts['pg driver (pg, TypeORM)']).toBe(200 + 300);
    expect(parts['other (runtime, native)']).toBe(500);
    expect(parts['garbage collection']).toBe(600);
    const total = Object.values(parts).reduce((a, b) => a + b, 0);
    expect(total).toBe(100 + 200 + 300 + 400 + 500 + 600);
  });

  it('adds up several profiles', () => {
    expect(profileParts([profile, profile])['garbage collection']).toBe(1200);
  });

  it('scales the shares to the measured CPU per recording', () => {
    const rows = partsPerRecording(profileParts([profile]), 2100);
    const gc = rows.find((r) => r.part === 'garbage collection')!;
    expect(gc.share).toBeCloseTo(600 / 2100);
    expect(gc.us).toBeCloseTo(600);
    expect(rows.reduce((a, r) => a + r.us, 0)).toBeCloseTo(2100);
  });
});
