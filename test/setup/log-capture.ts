import { Writable } from 'node:stream';
import { jsonLines } from './service-process';

/** A stream a pino logger can write to in a test, and what was written: as text, and as JSON lines. */
export function logCapture(): {
  stream: Writable;
  text: () => string;
  lines: () => Record<string, unknown>[];
} {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += chunk;
      done();
    },
  });
  return { stream, text: () => text, lines: () => jsonLines(text) };
}
