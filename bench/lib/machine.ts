import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as os from 'node:os';
import type { DataSource } from 'typeorm';

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  os: string;
  node: string;
  postgres: string;
  postgresSettings: Record<string, string>;
  /** 1-minute load average at the start and end of the run (other developers share the machine). */
  loadAverage: { start: number; end?: number };
  /** Seconds the heap read of warmHeap took before the run (absent with BENCH_WARM=off). */
  heapWarmSeconds?: number;
}

/**
 * Reads the conversations table's heap once, by a sequential scan without workers, so that its
 * pages are in the OS page cache before anything is timed. On a freshly seeded machine they are
 * not (4 of 11 GB were cached right after bench:setup), and requests that visit heap pages (GIN
 * bitmap scans: kw-common reads 40,000) measured the disk: 672 ms instead of 345. Returns the
 * seconds it took.
 */
export async function warmHeap(dataSource: DataSource): Promise<number> {
  const started = process.hrtime.bigint();
  await dataSource.transaction(async (m) => {
    for (const setting of [
      'enable_indexscan',
      'enable_indexonlyscan',
      'enable_bitmapscan',
      'max_parallel_workers_per_gather',
    ])
      await m.query(`SET LOCAL ${setting} = 0`);
    await m.query('SELECT count(*) FROM conversations');
  });
  return Number(process.hrtime.bigint() - started) / 1e9;
}

export async function describeMachine(dataSource: DataSource): Promise<MachineInfo> {
  const [{ version }] = await dataSource.query('SELECT version()');
  const settings: Array<{ name: string; setting: string; unit: string | null }> = await dataSource.query(
    `SELECT name, setting, unit FROM pg_settings
      WHERE name IN ('shared_buffers', 'work_mem', 'effective_cache_size', 'random_page_cost', 'jit', 'max_parallel_workers_per_gather')
      ORDER BY name`,
  );
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    postgres: String(version).split(' on ')[0],
    postgresSettings: Object.fromEntries(
      settings.map((s) => [s.name, s.unit ? `${s.setting} × ${s.unit}` : s.setting]),
    ),
    loadAverage: { start: os.loadavg()[0] },
  };
}

/** VmRSS and VmHWM of a process, in MiB (Linux /proc). */
export function processMemory(pid: number): { rssMiB: number; hwmMiB: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMiB: kib('VmRSS') / 1024, hwmMiB: kib('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** The pid of the process listening on `port` (via `ss`), when one can be found. */
export function listeningPid(port: number): number | undefined {
  try {
    const out = execFileSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8' });
    const m = /pid=(\d+)/.exec(out);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Samples a process's RSS while the bench runs; reports the highest sample and VmHWM. */
export class MemorySampler {
  private peakRss = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    intervalMs = 250,
  ) {
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
    this.sample();
  }

  private sample(): void {
    const m = processMemory(this.pid);
    if (m) this.peakRss = Math.max(this.peakRss, m.rssMiB);
  }

  stop(): { peakSampledRssMiB: number; vmHwmMiB?: number; rssEndMiB?: number } {
    clearInterval(this.timer);
    this.sample();
    const m = processMemory(this.pid);
    return { peakSampledRssMiB: this.peakRss, vmHwmMiB: m?.hwmMiB, rssEndMiB: m?.rssMiB };
  }
}
