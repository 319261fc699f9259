import { describe, expect, it } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import {
  backendDatabase,
  cpuDelta,
  cpuPerRequest,
  CpuReading,
  cpuReading,
  parseStat,
} from './cpu-accounting';

describe('CPU accounting of a bench load (/proc)', () => {
  it('reads the parent, utime + stime and the start time after the command name, spaces and parentheses included', () => {
    const stat = '4242 (node (x) y) S 4100 4242 4242 0 -1 4194304 100 0 0 0 731 269 0 0 20 0 11 0 5000 123';
    expect(parseStat(stat)).toEqual({ ppid: 4100, ticks: 1000, started: 5000 });
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
      const before = cpuReading(parent.pid);
      burn(300); // this process: the bench
      const benchDone = cpuReading(parent.pid);
      await burnt;
      const spent = cpuDelta(before, cpuReading(parent.pid));
      const perRequest = cpuPerRequest(spent, 1);
      // /proc counts in 10 ms ticks: 300 ms each, less a tick or two.
      expect(perRequest.service).toBeGreaterThanOrEqual(280_000);
      expect(cpuPerRequest(cpuDelta(before, benchDone), 1).bench).toBeGreaterThanOrEqual(280_000);
      expect(perRequest.machine).toBeGreaterThanOrEqual(perRequest.service + 280_000 - 20_000);
    } finally {
      spawnSync('pkill', ['-P', String(parent.pid)]);
      parent.kill();
    }
  });

  it('counts each of several services given by their pids', async () => {
    const burner = `const s = process.cpuUsage(); for (;;) { const u = process.cpuUsage(s); if (u.user + u.system >= 200000) break; } console.log('burnt'); setTimeout(() => {}, 10000);`;
    const services = [0, 1].map(() =>
      spawn(process.execPath, ['-e', burner], { stdio: ['ignore', 'pipe', 'ignore'] }),
    );
    try {
      const burnt = services.map((s) => new Promise((resolve) => s.stdout!.on('data', resolve)));
      const pids = services.map((s) => s.pid!);
      const before = cpuReading(pids);
      await Promise.all(burnt);
      const perRequest = cpuPerRequest(cpuDelta(before, cpuReading(pids)), 1);
      // 200 ms each, less a tick or two each, and none of it counted as the bench's.
      expect(perRequest.service).toBeGreaterThanOrEqual(360_000);
      expect(perRequest.bench).toBeLessThan(200_000);
    } finally {
      for (const s of services) s.kill();
    }
  });

  it('leaves out a process that ended between the readings instead of subtracting its history', () => {
    const reading = (
      processes: Array<[string, 'postgres' | 'service', number]>,
      machine: number,
    ): CpuReading => ({
      processes: new Map(processes.map(([key, group, ticks]) => [key, { group, ticks }])),
      machine,
    });
    const before = reading(
      [
        ['10@1', 'postgres', 5000], // ends before the second reading
        ['11@1', 'postgres', 100],
        ['12@1', 'service', 40],
      ],
      9000,
    );
    const after = reading(
      [
        ['11@1', 'postgres', 130],
        ['12@1', 'service', 70],
        ['13@2', 'postgres', 5], // started in between
        ['10@3', 'postgres', 2], // pid 10 reused by a new process
      ],
      9100,
    );
    expect(cpuDelta(before, after)).toEqual({ service: 30, postgres: 37, redis: 0, bench: 0, machine: 100 });
    expect(cpuPerRequest(cpuDelta(before, after), 10)).toEqual({
      service: 30_000,
      postgres: 37_000,
      redis: 0,
      bench: 0,
      machine: 100_000,
    });
  });

  it("names a PostgreSQL backend's database from its title, and none for the server's own processes", () => {
    expect(
      backendDatabase('postgres: 15/main: postgres sa_bench_rec 127.0.0.1(39790) idle in transaction'),
    ).toBe('sa_bench_rec');
    expect(backendDatabase('postgres: 15/main: app shop [local] SELECT')).toBe('shop');
    expect(backendDatabase('postgres: 15/main: checkpointer')).toBeUndefined();
    expect(backendDatabase('postgres: 15/main: background writer')).toBeUndefined();
    expect(backendDatabase('postgres: 15/main: autovacuum worker sa_bench_live')).toBeUndefined();
  });

  it('is zero per request when nothing was served', () => {
    const t = cpuReading(undefined);
    expect(cpuPerRequest(cpuDelta(t, t), 0)).toEqual({
      service: 0,
      postgres: 0,
      redis: 0,
      bench: 0,
      machine: 0,
    });
  });
});
