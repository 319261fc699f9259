import { ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The repository root: where `npm start` runs. */
export const REPO_ROOT = `${__dirname}/../..`;

export interface ServiceProcess {
  child: ChildProcess;
  output: () => string;
  stdout: () => string;
  exited: Promise<{ code: number | null; signal: string | null }>;
}

/** Runs `command args` from the repository root with the test environment plus `env`, capturing its output. */
export function spawnProcess(command: string, args: string[], env: Record<string, string>): ServiceProcess {
  const child = spawn(command, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', WORKERS: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  child.stdout!.on('data', (d) => {
    output += d;
    stdout += d;
  });
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => output, stdout: () => stdout, exited };
}

/**
 * The node flags that load TypeScript from source (source-loader.js): `node ...SOURCE_LOADER file.ts`
 * runs a file of src/ as `npm start` runs its build.
 */
export const SOURCE_LOADER = ['-r', `${__dirname}/source-loader.js`];

/** An entry point of src/ (main.ts, worker.ts) run from source, as `npm start` runs its build. */
export function startEntryPoint(entry: string, env: Record<string, string>): ServiceProcess {
  return spawnProcess(process.execPath, [...SOURCE_LOADER, entry], env);
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Waits until the service says it listens on `port` and /health/ready there answers 200; false when
 * the process exits or the time is up. The port comes from freePort, so until the service binds it
 * another test's server may hold it and answer: only the service's own "listening on" line says the
 * answer is the service's.
 */
export async function waitForReady(
  port: number,
  service: ServiceProcess,
  timeoutMs = 60_000,
): Promise<boolean> {
  let gone = false;
  void service.exited.then(() => (gone = true));
  const listening = new RegExp(`"msg":"listening on [^"]*:${port}"`);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !gone) {
    if (listening.test(service.output())) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/health/ready`);
        if (res.status === 200) return true;
      } catch {
        // not listening yet
      }
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

/** Waits until `predicate` holds for the output; false when the process exits first or the time is up. */
export async function waitForOutput(
  service: ServiceProcess,
  predicate: (output: string) => boolean,
  timeoutMs = 60_000,
): Promise<boolean> {
  let gone = false;
  void service.exited.then(() => (gone = true));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (predicate(service.output())) return true;
    if (gone) return predicate(service.output());
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** Every process whose ancestry leads to `pid` (Linux /proc), e.g. the shell and node under npm. */
export function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name (2nd field) is in parentheses and may hold spaces: read after it.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // exited while we looked
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const [child, ppid] of parents) {
      if (ppid === parent) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie (exited, not yet reaped by its parent) is gone for our purpose.
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Each line of the output parsed as JSON (a line that is not JSON makes the test fail with it). */
export function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
    });
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export async function isListening(port: number): Promise<boolean> {
  const { connect } = await import('node:net');
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
