/**
 * Where a service process's samples went, by part of a recording (`npm run bench:recording`):
 * a V8 CPU profile (the inspector's Profiler, or `node --cpu-prof`) read sample by sample, each
 * sample's time charged to the part of the innermost frame of its stack that belongs to one.
 */

/** The parts of the table, in the order printed. */
export const NODE_PARTS = [
  'HTTP + framework (Node http, Express, Nest)',
  'JSON parsing (body)',
  'validation (class-validator, class-transformer)',
  'transcript (messages: redaction, blocks)',
  'postings',
  'rollups',
  'events',
  'outbox',
  'presenting the answer',
  'service code (other)',
  'pg driver (pg, TypeORM)',
  'Redis client (rate limit)',
  'logging (pino)',
  'garbage collection',
  'other (runtime, native)',
] as const;

export type NodePart = (typeof NODE_PARTS)[number];

export interface CallFrame {
  functionName: string;
  url: string;
}

/** A V8 CPU profile (Profiler.stop's `profile`, or a .cpuprofile file). */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: CallFrame; children?: number[] }>;
  samples: number[];
  /** µs before each sample. */
  timeDeltas: number[];
}

/** Rules on a frame's source path, first match wins; paths are the built service's (dist/) or node_modules'. */
const PATH_RULES: Array<[RegExp, NodePart]> = [
  [
    /\/node_modules\/(pg|pg-protocol|pg-pool|pg-types|postgres-[a-z]+|pg-connection-string|typeorm)\//,
    'pg driver (pg, TypeORM)',
  ],
  [
    /\/node_modules\/(class-validator|class-transformer|validator|libphonenumber-js)\//,
    'validation (class-validator, class-transformer)',
  ],
  [/\/dist\/common\/http\/validation/, 'validation (class-validator, class-transformer)'],
  [/\/dist\/conversations\/dto\//, 'validation (class-validator, class-transformer)'],
  [/\/node_modules\/(body-parser|raw-body|iconv-lite|content-type)\//, 'JSON parsing (body)'],
  [
    /\/node_modules\/(pino|pino-[a-z-]+|sonic-boom|fast-redact|thread-stream|on-exit-leak-free)\//,
    'logging (pino)',
  ],
  [/\/dist\/common\/logging\//, 'logging (pino)'],
  [/\/node_modules\/(ioredis|redis-parser|@ioredis|@nest-lab)\//, 'Redis client (rate limit)'],
  [
    /\/dist\/redaction\/|\/dist\/conversations\/(page-url|transcript)/,
    'transcript (messages: redaction, blocks)',
  ],
  [/\/dist\/search\/.*posting/, 'postings'],
  [/\/dist\/search\/rollups|\/dist\/database\/stats-rollups|\/dist\/stats\/stats-rollup/, 'rollups'],
  [/\/dist\/events\/|\/dist\/conversations\/conversation-events/, 'events'],
  [/\/dist\/search\/(outbox|mirror)/, 'outbox'],
  [/\/dist\/conversations\/conversation\.presenter|\/dist\/database\/records\//, 'presenting the answer'],
  [/\/dist\//, 'service code (other)'],
  [/\/node_modules\//, 'HTTP + framework (Node http, Express, Nest)'],
];

/**
 * The part a frame belongs to, or undefined for a frame of Node's own JavaScript or a builtin
 * (`node:…`, no url): those are charged to the nearest caller that has a part.
 */
export function framePart(frame: CallFrame): NodePart | 'idle' | undefined {
  if (frame.functionName === '(idle)') return 'idle';
  if (frame.functionName === '(garbage collector)') return 'garbage collection';
  if (frame.functionName === '(program)') return 'other (runtime, native)';
  if (!frame.url || frame.url.startsWith('node:')) return undefined;
  const url = frame.url.replace(/^file:\/\//, '');
  for (const [pattern, part] of PATH_RULES) if (pattern.test(url)) return part;
  return undefined;
}

/** A stack of Node's own frames only: the HTTP server's when one of them is, else the runtime's. */
function internalPart(frames: CallFrame[]): NodePart {
  return frames.some((f) => /node:_http|node:http/.test(f.url))
    ? 'HTTP + framework (Node http, Express, Nest)'
    : 'other (runtime, native)';
}

/**
 * µs of samples by part (idle left out), over one or several profiles: each sample's time (the
 * delta to the next sample; the last sample's own delta) is charged to the innermost frame of
 * its stack with a part; a stack of Node's own frames only goes to the HTTP server or the runtime.
 */
export function profileParts(profiles: CpuProfile[]): Record<NodePart, number> {
  const out = Object.fromEntries(NODE_PARTS.map((p) => [p, 0])) as Record<NodePart, number>;
  for (const profile of profiles) {
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const partOf = new Map<number, NodePart | 'idle'>();
    const resolve = (id: number): NodePart | 'idle' => {
      const known = partOf.get(id);
      if (known) return known;
      const internal: CallFrame[] = [];
      let part: NodePart | 'idle' | undefined;
      for (let at: number | undefined = id; at !== undefined && !part; at = parent.get(at)) {
        const frame = byId.get(at)!.callFrame;
        part = framePart(frame);
        if (!part) internal.push(frame);
      }
      const found = part ?? internalPart(internal);
      partOf.set(id, found);
      return found;
    };
    const { samples, timeDeltas } = profile;
    for (let i = 0; i < samples.length; i++) {
      const us = i + 1 < timeDeltas.length ? timeDeltas[i + 1] : (timeDeltas[i] ?? 0);
      const part = resolve(samples[i]);
      if (part !== 'idle') out[part] += Math.max(0, us);
    }
  }
  return out;
}

/** Each part's µs per recording: its share of the profile times the service's measured CPU per recording. */
export function partsPerRecording(
  parts: Record<NodePart, number>,
  cpuUsPerRecording: number,
): Array<{ part: NodePart; us: number; share: number }> {
  const total = Object.values(parts).reduce((a, b) => a + b, 0);
  return NODE_PARTS.map((part) => {
    const share = total > 0 ? parts[part] / total : 0;
    return { part, share, us: share * cpuUsPerRecording };
  });
}
