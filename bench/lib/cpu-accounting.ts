import { readdirSync, readFileSync } from 'node:fs';

/** Who spends the machine's CPU during a load: the service, Postgres, Redis, the bench itself. */
export type CpuGroup = 'service' | 'postgres' | 'redis' | 'bench';

export type CpuTicks = Record<CpuGroup | 'machine', number>;

/** Clock ticks per second of /proc's utime and stime (USER_HZ: 100 on Linux everywhere). */
const TICKS_PER_SECOND = 100;

/**
 * utime + stime of a process from the text of /proc/<pid>/stat, its parent's pid and its start
 * time. The command name (field 2) may hold spaces and parentheses: fields are counted after
 * its last `)`.
 */
export function parseStat(stat: string): { ppid: number; ticks: number; started: number } {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: state(3) ppid(4) … utime(14) stime(15) … starttime(22): indexes 0, 1, 11, 12, 19.
  return {
    ppid: Number(fields[1]),
    ticks: Number(fields[11]) + Number(fields[12]),
    started: Number(fields[19]),
  };
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined; // the process ended between the listing and the read
  }
}

/** The CPU time (clock ticks) each process of a group has spent so far, and the machine's. */
export interface CpuReading {
  /** By `<pid>@<start time>` (a pid may be reused): its group and ticks. */
  processes: Map<string, { group: CpuGroup; ticks: number }>;
  machine: number;
}

/**
 * The database a PostgreSQL backend serves, from its process title
 * (`postgres: 15/main: <user> <database> <host>(<port>) <state>`); undefined for the server's
 * own processes (checkpointer, WAL writer, background writer, launchers), which serve every
 * database.
 */
export function backendDatabase(title: string): string | undefined {
  const m = /^postgres: [^:]+: \S+ (\S+) (\S+\(\d+\)|\[local\])/.exec(title);
  return m ? m[1] : undefined;
}

/**
 * Reads the CPU time spent so far by the service (the process `servicePid`, or each of several,
 * and its children, its HTTP processes), every Postgres process (backends of other clients
 * included: the bench runs alone; with `postgresDatabase`, only the backends of that database
 * and the server's own processes, so that another database's clients on a shared server are
 * not counted), Redis, this process (the bench), and the whole machine (/proc/stat, idle and
 * iowait excluded). Linux only; elsewhere nothing is read.
 */
export function cpuReading(
  servicePid: number | readonly number[] | undefined,
  options: { postgresDatabase?: string } = {},
): CpuReading {
  const services = new Set(
    servicePid === undefined ? [] : typeof servicePid === 'number' ? [servicePid] : servicePid,
  );
  const processes = new Map<string, { group: CpuGroup; ticks: number }>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return { processes, machine: 0 };
  }
  for (const pid of pids) {
    const stat = read(`/proc/${pid}/stat`);
    if (!stat) continue;
    const { ppid, ticks, started } = parseStat(stat);
    const id = Number(pid);
    let group: CpuGroup | undefined;
    if (id === process.pid) group = 'bench';
    else if (services.has(id) || services.has(ppid)) group = 'service';
    else {
      const command = read(`/proc/${pid}/cmdline`)?.split('\0')[0] ?? '';
      if (/(^|\/)postgres(:|$)/.test(command) || command.startsWith('postgres:')) {
        const database = options.postgresDatabase ? backendDatabase(command) : undefined;
        if (database === undefined || database === options.postgresDatabase) group = 'postgres';
      } else if (/redis-server/.test(command)) group = 'redis';
    }
    if (group) processes.set(`${pid}@${started}`, { group, ticks });
  }
  const cpu = read('/proc/stat')?.split('\n')[0].trim().split(/\s+/).slice(1).map(Number) ?? [];
  // user nice system idle iowait irq softirq steal …: busy = all but idle and iowait.
  const machine = cpu.reduce((a, b) => a + b, 0) - (cpu[3] ?? 0) - (cpu[4] ?? 0);
  return { processes, machine };
}

/**
 * The ticks each group spent between two readings: each process's own difference, a process
 * started in between counted whole. A process that ended in between is left out (its last
 * ticks are lost, not its whole history subtracted: a closing Postgres backend would otherwise
 * make the group's figure negative).
 */
export function cpuDelta(before: CpuReading, after: CpuReading): CpuTicks {
  const out: CpuTicks = {
    service: 0,
    postgres: 0,
    redis: 0,
    bench: 0,
    machine: after.machine - before.machine,
  };
  for (const [key, { group, ticks }] of after.processes)
    out[group] += ticks - (before.processes.get(key)?.ticks ?? 0);
  return out;
}

/** Microseconds of CPU per request of each group, from the ticks spent serving `requests`. */
export function cpuPerRequest(spent: CpuTicks, requests: number): CpuTicks {
  const us = (k: keyof CpuTicks) =>
    requests > 0 ? Math.round(((spent[k] / TICKS_PER_SECOND) * 1e6) / requests) : 0;
  return {
    service: us('service'),
    postgres: us('postgres'),
    redis: us('redis'),
    bench: us('bench'),
    machine: us('machine'),
  };
}
