import { describe, expect, it } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { cpuPerRequest, cpuTicks, parseStat } from './cpu-accounting';

describe('CPU accounting of a bench load (/proc)', () => {
  it('reads the parent and utime + stime after the command name, spaces and parentheses included', () => {
    const stat = '4242 (node (x) y) S 4100 4242 4242 0 -1 4194304 100 0 0 0 731 269 0 0 20 0 11 0 5000';
    expect(parseStat(stat)).toEqual({ ppid: 4100, ticks: 1000 });
  });

  /** Busy until this process has used `ms` more of CPU time (not wall time: the machine may be busy). */
  const burn = (ms: number) => {
    const start = process.cpuUsage();
    for (;;) {
      const used = process.cpuUsage(start);
      if ((used.user + used.system) / 1000 >= ms) return;
    }
  };

  it('counts CPU burnt by the service and its children as the service, and by this process as the bench', async () => {
    // A "service" whose child burns 300 ms of CPU, says so, then idles.
    const child = `const s = process.cpuUsage(); for (;;) { const u = process.cpuUsage(s); if (u.user + u.system >= 300000) break; } console.log('burnt'); setTimeout(() => {}, 10000);`;
    const before = cpuTicks(undefined);
    const parent = spawn(
      process.execPath,
      [
        '-e',
        `require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(child)}], { stdio: ['ignore', 'inherit', 'ignore'] }); setTimeout(() => {}, 10000);`,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    try {
      const burnt = new Promise((resolve) => parent.stdout!.on('data', resolve));
      burn(300); // this process: the bench
      const benchBefore = cpuTicks(undefined).bench;
      await burnt;
      const after = cpuTicks(parent.pid);
      const perRequest = cpuPerRequest({ ...before, service: 0 }, after, 1);
      // /proc counts in 10 ms ticks: 300 ms each, less a tick or two.
      expect(perRequest.service).toBeGreaterThanOrEqual(280_000);
      expect(cpuPerRequest(before, { ...before, bench: benchBefore }, 1).bench).toBeGreaterThanOrEqual(
        280_000,
      );
      expect(perRequest.machine).toBeGreaterThanOrEqual(perRequest.service + 280_000 - 20_000);
    } finally {
      spawnSync('pkill', ['-P', String(parent.pid)]);
      parent.kill();
    }
  });

  it('is zero per request when nothing was served', () => {
    const t = cpuTicks(undefined);
    expect(cpuPerRequest(t, t, 0)).toEqual({ service: 0, postgres: 0, redis: 0, bench: 0, machine: 0 });
  });
});
