/**
 * PostgreSQL's autovacuum at its production defaults, for a server whose `autovacuum` is off
 * (the bench machine's): a per-table `autovacuum_enabled` cannot turn it on (it only turns it
 * off), and `ALTER SYSTEM SET autovacuum = on` would change every database of a shared server.
 * So the bench does what the launcher would do, on its own database only: every `naptime`
 * seconds it reads each table's counters (pg_stat_user_tables) and vacuums or analyzes the
 * tables past the thresholds autovacuum computes from the server's defaults and the table's own
 * settings (reloptions), one table at a time, under autovacuum's cost-based delay.
 */
import type { DataSource } from 'typeorm';

/** The defaults of PostgreSQL 13–17 that decide when autovacuum acts and how fast it goes. */
export const AUTOVACUUM_DEFAULTS = {
  autovacuum_naptime: 60,
  autovacuum_vacuum_threshold: 50,
  autovacuum_vacuum_scale_factor: 0.2,
  autovacuum_vacuum_insert_threshold: 1000,
  autovacuum_vacuum_insert_scale_factor: 0.2,
  autovacuum_analyze_threshold: 50,
  autovacuum_analyze_scale_factor: 0.1,
  /** autovacuum_vacuum_cost_delay (ms) and the cost limit it uses (vacuum_cost_limit's 200). */
  autovacuum_vacuum_cost_delay: 2,
  autovacuum_vacuum_cost_limit: 200,
} as const;

/** One action the emulation took. */
export interface AutovacuumAction {
  at: string;
  table: string;
  action: 'VACUUM' | 'ANALYZE' | 'VACUUM ANALYZE';
  why: string;
  seconds: number;
}

interface TableCounters {
  relname: string;
  reltuples: number;
  n_dead_tup: number;
  n_ins_since_vacuum: number;
  n_mod_since_analyze: number;
  reloptions: string[] | null;
}

/** A table's own setting (reloptions `name=value`), else the default. */
function setting(options: string[] | null, name: keyof typeof AUTOVACUUM_DEFAULTS): number {
  const own = options?.find((o) => o.startsWith(`${name}=`));
  return own ? Number(own.slice(name.length + 1)) : AUTOVACUUM_DEFAULTS[name];
}

/** What autovacuum would do to a table now: its thresholds against its counters. */
export function autovacuumDecision(t: TableCounters): { vacuum?: string; analyze?: string } {
  const rows = Math.max(0, t.reltuples);
  const o = t.reloptions;
  const dead =
    setting(o, 'autovacuum_vacuum_threshold') + setting(o, 'autovacuum_vacuum_scale_factor') * rows;
  const inserted =
    setting(o, 'autovacuum_vacuum_insert_threshold') +
    setting(o, 'autovacuum_vacuum_insert_scale_factor') * rows;
  const analyze =
    setting(o, 'autovacuum_analyze_threshold') + setting(o, 'autovacuum_analyze_scale_factor') * rows;
  const out: { vacuum?: string; analyze?: string } = {};
  if (t.n_dead_tup > dead) out.vacuum = `${t.n_dead_tup} dead rows > ${Math.round(dead)}`;
  else if (t.n_ins_since_vacuum > inserted)
    out.vacuum = `${t.n_ins_since_vacuum} inserted > ${Math.round(inserted)}`;
  if (t.n_mod_since_analyze > analyze)
    out.analyze = `${t.n_mod_since_analyze} changed > ${Math.round(analyze)}`;
  return out;
}

/** Runs the emulation on `dataSource`'s database until stop() (which waits for a running action). */
export function startAutovacuum(
  dataSource: DataSource,
  log: (message: string) => void,
  naptimeSeconds: number = AUTOVACUUM_DEFAULTS.autovacuum_naptime,
): { actions: AutovacuumAction[]; stop: () => Promise<void> } {
  const actions: AutovacuumAction[] = [];
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const round = async () => {
    const tables: TableCounters[] = await dataSource.query(
      `SELECT s.relname, c.reltuples::float8 AS reltuples, s.n_dead_tup::float8 AS n_dead_tup,
         s.n_ins_since_vacuum::float8 AS n_ins_since_vacuum, s.n_mod_since_analyze::float8 AS n_mod_since_analyze,
         c.reloptions
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid ORDER BY s.relname`,
    );
    for (const t of tables) {
      if (stopped) return;
      const d = autovacuumDecision(t);
      if (!d.vacuum && !d.analyze) continue;
      const action = d.vacuum && d.analyze ? 'VACUUM ANALYZE' : d.vacuum ? 'VACUUM' : 'ANALYZE';
      const start = performance.now();
      // VACUUM cannot run in a transaction block: the cost settings are the session's, reset after.
      const runner = dataSource.createQueryRunner();
      try {
        await runner.query(`SET vacuum_cost_delay = '${AUTOVACUUM_DEFAULTS.autovacuum_vacuum_cost_delay}ms'`);
        await runner.query(`SET vacuum_cost_limit = ${AUTOVACUUM_DEFAULTS.autovacuum_vacuum_cost_limit}`);
        await runner.query(
          d.vacuum ? `VACUUM${d.analyze ? ' (ANALYZE)' : ''} "${t.relname}"` : `ANALYZE "${t.relname}"`,
        );
      } finally {
        await runner.query('RESET vacuum_cost_delay').catch(() => undefined);
        await runner.query('RESET vacuum_cost_limit').catch(() => undefined);
        await runner.release();
      }
      const seconds = (performance.now() - start) / 1000;
      const why = [d.vacuum, d.analyze].filter(Boolean).join('; ');
      actions.push({ at: new Date().toISOString(), table: t.relname, action, why, seconds });
      log(`autovacuum (emulated): ${action} ${t.relname} (${why}) in ${seconds.toFixed(1)} s`);
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = round()
        .catch((e: unknown) => log(`autovacuum (emulated) failed: ${String(e)}`))
        .finally(schedule);
    }, naptimeSeconds * 1000);
  };
  schedule();
  return {
    actions,
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
