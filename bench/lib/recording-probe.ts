/**
 * Loaded into a service process by `npm run bench:recording` (NODE_OPTIONS=--require, with
 * ts-node), never into a measured one: when RECORDING_PROBE_DIR is set, SIGWINCH makes the
 * process read `<dir>/command` and do what it says (SIGWINCH: ignored by default, and not one
 * of the signals on which Nest's shutdown hooks close the app, as SIGUSR2 is):
 * - `capture-start` / `capture-stop`: records every statement its pg clients send (a hook on
 *   pg's Client#query: the text, the values as pg is handed them, the client's number), then
 *   writes them to `<dir>/statements-<pid>.json`;
 * - `profile-start` / `profile-stop`: V8's sampling profiler through the inspector, written to
 *   `<dir>/profile-<pid>.cpuprofile`.
 * Each command is answered by `<dir>/<command>-<pid>.done`, so the bench knows it was done.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { Client } from 'pg';
import { CapturedStatement, encodeValue } from './recording-statements';

type Query = (...args: unknown[]) => unknown;

function install(dir: string): void {
  const statements: CapturedStatement[] = [];
  const connections = new WeakMap<object, number>();
  let capturing = false;
  let nextConnection = 1;
  const proto = Client.prototype as unknown as { query: Query };
  const original = proto.query;
  proto.query = function (this: object, ...args: unknown[]) {
    if (capturing)
      try {
        capture(this, args);
      } catch (e) {
        process.stderr.write(`probe: ${String(e)}\n`);
      }
    return original.apply(this, args);
  };
  const capture = (client: object, args: unknown[]) => {
    const [config, values] = args;
    const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
    const given =
      typeof config === 'object' && config !== null && Array.isArray((config as { values?: unknown }).values)
        ? (config as { values: unknown[] }).values
        : Array.isArray(values)
          ? values
          : [];
    if (typeof text === 'string') {
      if (!connections.has(client)) connections.set(client, nextConnection++);
      statements.push({ connection: connections.get(client)!, text, values: given.map(encodeValue) });
    }
  };

  let session: Session | undefined;
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session!.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result))),
    );

  const commands: Record<string, () => Promise<void>> = {
    'capture-start': async () => {
      statements.length = 0;
      capturing = true;
    },
    'capture-stop': async () => {
      capturing = false;
      writeFileSync(join(dir, `statements-${process.pid}.json`), JSON.stringify(statements));
    },
    'profile-start': async () => {
      session = new Session();
      session.connect();
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: 200 });
      await post('Profiler.start');
    },
    'profile-stop': async () => {
      const { profile } = (await post('Profiler.stop')) as { profile: unknown };
      writeFileSync(join(dir, `profile-${process.pid}.cpuprofile`), JSON.stringify(profile));
      session!.disconnect();
      session = undefined;
    },
  };

  process.on('SIGWINCH', () => {
    const command = readFileSync(join(dir, 'command'), 'utf8').trim();
    const run = commands[command];
    if (!run) return;
    void run().then(() => writeFileSync(join(dir, `${command}-${process.pid}.done`), ''));
  });
}

const dir = process.env.RECORDING_PROBE_DIR;
if (dir) install(dir);
