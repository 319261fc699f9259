import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dropDatabase } from '../../src/database/data-source';
import {
  descendantsOf,
  freePort,
  isAlive,
  isListening,
  ServiceProcess,
  spawnProcess,
  waitForOutput,
  waitForReady,
} from '../setup/service-process';
import { TEST_RUN_ENV } from '../setup/test-run';

/**
 * A supervisor (systemd, a container runtime, a process manager) runs `npm start` and stops it
 * with SIGTERM to the npm process. The real npm runs the real scripts here: they build dist/ (a
 * no-op when nothing changed) and start node, which must receive the signal and stop cleanly.
 * One file, run in order, so the two scripts never build dist/ at the same time.
 */
const BUILD_AND_START_MS = 240_000;

function databaseUrl(suffix: string): string {
  const url = new URL(process.env[TEST_RUN_ENV.database]!);
  url.pathname = `${url.pathname}_${suffix}`;
  return url.toString();
}

async function stopWithSigterm(npm: ServiceProcess): Promise<{ before: number[]; survivors: number[] }> {
  const before = descendantsOf(npm.child.pid!);
  npm.child.kill('SIGTERM');
  await npm.exited;
  // npm exits only after its script did; give a stray process a moment to prove it stays.
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && before.some(isAlive)) await new Promise((r) => setTimeout(r, 100));
  return { before, survivors: before.filter(isAlive) };
}

function killAll(npm: ServiceProcess, pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  npm.child.kill('SIGKILL');
}

describe('waitForReady, the readiness these tests wait for', () => {
  it("is not fooled by another server answering on the service's port before the service binds it", async () => {
    const stranger = createServer((_req, res) => res.writeHead(200).end('{}'));
    await new Promise<void>((resolve) => stranger.listen(0, '127.0.0.1', resolve));
    const { port } = stranger.address() as AddressInfo;
    // A process that prints nothing and lives a few seconds: like npm while tsc builds dist/.
    const quiet = spawnProcess(process.execPath, ['-e', 'setTimeout(() => {}, 3000)'], {});
    try {
      expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(200);
      expect(await waitForReady(port, quiet, 2_000)).toBe(false);
    } finally {
      quiet.child.kill('SIGKILL');
      await new Promise((resolve) => stranger.close(resolve));
    }
  });
});

describe("a supervisor's SIGTERM to `npm start` stops the service gracefully", () => {
  it('npm start: after SIGTERM to the npm process nothing listens on the port and node has exited', async () => {
    const url = databaseUrl('npm_start');
    const port = await freePort();
    const npm = spawnProcess('npm', ['start'], {
      DATABASE_URL: url,
      REDIS_KEY_PREFIX: process.env[TEST_RUN_ENV.prefix]!,
      PORT: String(port),
    });
    let pids: number[] = [];
    try {
      expect(await waitForReady(port, npm, BUILD_AND_START_MS)).toBe(true);
      pids = descendantsOf(npm.child.pid!);
      expect(pids.length).toBeGreaterThan(0);

      const { survivors } = await stopWithSigterm(npm);
      expect(survivors).toEqual([]);
      expect(await isListening(port)).toBe(false);
      // Graceful: the service saw the signal and ran its shutdown, it was not killed outright.
      expect(npm.output()).toContain('SIGTERM received: shutting down');
    } finally {
      killAll(npm, pids);
      await dropDatabase(url);
    }
  }, 300_000);

  it('npm run worker: after SIGTERM to the npm process the worker has exited', async () => {
    const url = databaseUrl('npm_worker');
    const npm = spawnProcess('npm', ['run', 'worker'], {
      DATABASE_URL: url,
      REDIS_KEY_PREFIX: process.env[TEST_RUN_ENV.prefix]!,
    });
    let pids: number[] = [];
    try {
      expect(await waitForOutput(npm, (out) => out.includes('worker started'), BUILD_AND_START_MS)).toBe(
        true,
      );
      pids = descendantsOf(npm.child.pid!);
      expect(pids.length).toBeGreaterThan(0);

      const { survivors } = await stopWithSigterm(npm);
      expect(survivors).toEqual([]);
      expect(npm.output()).toContain('SIGTERM received: shutting down');
    } finally {
      killAll(npm, pids);
      await dropDatabase(url);
    }
  }, 300_000);
});
