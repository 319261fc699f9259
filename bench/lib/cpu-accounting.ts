import { readdirSync, readFileSync } from 'node:fs';

/** Who spends the machine's CPU during a load: the service, Postgres, Redis, the bench itself. */
export type CpuGroup = 'service' | 'postgres' | 'redis' | 'bench';

export type CpuTicks = Record<CpuGroup | 'machine', number>;

/** Clock ticks per second of /proc's utime and stime (USER_HZ: 100 on Linux everywhere). */
const TICKS_PER_SECOND = 100;

/**
 * utime + stime of a process from the text of /proc/<pid>/stat, and its parent's pid. The
 * command name (field 2) may hold spaces and parentheses: fields are counted after its last `)`.
 */
export function parseStat(stat: string): { ppid: number; ticks: number } {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: state(3) ppid(4) … utime(14) stime(15), i.e. indexes 0, 1, …, 11, 12 here.
  return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined; // the process ended between the listing and the read
  }
}

/**
 * CPU time (clock ticks) spent so far by each group: the service (the process `servicePid` and
 * its children, its HTTP processes), every Postgres process (backends of other clients
 * included: the bench runs alone), Redis, this process, and the whole machine (/proc/stat,
 * idle and iowait excluded). Linux only; on another system every figure is 0.
 */
export function cpuTicks(servicePid: number | undefined): CpuTicks {
  const out: CpuTicks = { service: 0, postgres: 0, redis: 0, bench: 0, machine: 0 };
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return out;
  }
  for (const pid of pids) {
    const stat = read(`/proc/${pid}/stat`);
    if (!stat) continue;
    const { ppid, ticks } = parseStat(stat);
    const id = Number(pid);
    if (id === process.pid) out.bench += ticks;
    else if (servicePid !== undefined && (id === servicePid || ppid === servicePid)) out.service += ticks;
    else {
      const command = read(`/proc/${pid}/cmdline`)?.split('\0')[0] ?? '';
      if (/(^|\/)postgres(:|$)/.test(command) || command.startsWith('postgres:')) out.postgres += ticks;
      else if (/redis-server/.test(command)) out.redis += ticks;
    }
  }
  const cpu = read('/proc/stat')?.split('\n')[0].trim().split(/\s+/).slice(1).map(Number) ?? [];
  // user nice system idle iowait irq softirq steal …: busy = all but idle and iowait.
  out.machine = cpu.reduce((a, b) => a + b, 0) - (cpu[3] ?? 0) - (cpu[4] ?? 0);
  return out;
}

/** Microseconds of CPU per request of each group between two readings. */
export function cpuPerRequest(before: CpuTicks, after: CpuTicks, requests: number): CpuTicks {
  const us = (k: keyof CpuTicks) =>
    requests > 0 ? Math.round((((after[k] - before[k]) / TICKS_PER_SECOND) * 1e6) / requests) : 0;
  return {
    service: us('service'),
    postgres: us('postgres'),
    redis: us('redis'),
    bench: us('bench'),
    machine: us('machine'),
  };
}
