import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { connect, freePort } from '@weft/postgres';
import type postgres from 'postgres';
import { freshDatabase } from './fresh-database.js';
import { seedFinishedRuns } from './list-seed.js';
import { type Measurement, runWorkload } from './run-workload.js';
import { median } from './stats.js';
import { w2 } from './workloads.js';

/** How the purge benchmark runs. */
export interface PurgeBenchOptions {
  /** Finished runs seeded (1,000,000 is the target). */
  readonly runs: number;
  readonly w2Runs: number;
  readonly workers: number;
  readonly concurrency: number;
  readonly dbName: string;
  readonly out: string;
  /** Pairs of phases (without, while purging). */
  readonly repeat: number;
}

/** One W2 measurement, with or without the purge going on, and how many runs the purge deleted meanwhile. */
interface Phase {
  readonly name: string;
  readonly stepsPerSec: number;
  readonly stepP99Ms: number;
  readonly purged: number;
  readonly seconds: number;
}

/**
 * Gives every seeded run an attempt and three history events, as a finished one-step run has, so that a purge
 * deletes what a real run leaves behind (rows of tasks and history, not only of runs).
 */
async function seedRunRows(sql: postgres.Sql, log: (line: string) => void): Promise<void> {
  await sql`
    INSERT INTO weft.tasks (run_id, id, node_id, iteration, attempt, status, task_type, input, output,
                            created_at, started_at, finished_at)
    SELECT r.id, r.id, 'step', '', 1, 'completed', 'bench.step', r.input, r.output, r.created_at, r.created_at, r.finished_at
      FROM weft.runs r`;
  await sql`
    INSERT INTO weft.history (run_id, seq, type, node_id, iteration, attempt, data, at)
    SELECT r.id, s, CASE s WHEN 1 THEN 'run.started' WHEN 2 THEN 'node.completed' ELSE 'run.completed' END,
           CASE WHEN s = 2 THEN 'step' END, CASE WHEN s = 2 THEN '' END, CASE WHEN s = 2 THEN 1 END,
           r.output, r.created_at
      FROM weft.runs r, generate_series(1, 3) s`;
  await sql`VACUUM ANALYZE weft.tasks`;
  await sql`VACUUM ANALYZE weft.history`;
  log('seeded an attempt and three history events per run');
}

async function finishedRuns(admin: postgres.Sql): Promise<number> {
  const [row] = await admin<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM weft.runs WHERE finished_at IS NOT NULL`;
  return row?.n ?? 0;
}

/** Runs W2 on the seeded database and counts the finished runs deleted meanwhile. */
async function phase(
  name: string,
  dbUrl: string,
  admin: postgres.Sql,
  o: PurgeBenchOptions,
  log: (line: string) => void,
): Promise<Phase> {
  const before = await finishedRuns(admin);
  const started = Date.now();
  const m: Measurement = await runWorkload(w2(o.w2Runs), {
    databaseUrl: dbUrl,
    admin,
    port: await freePort(),
    workers: o.workers,
    concurrency: o.concurrency,
    pacedShare: 0,
    fixedStepsPerSec: 0,
    fewRuns: 0,
    progress: (line) => log(`${name}: ${line}`),
  });
  const seconds = (Date.now() - started) / 1000;
  // W2's own runs finished during the phase; none is old enough to be purged.
  const purged = Math.max(0, before + o.w2Runs - (await finishedRuns(admin)));
  const out = { name, stepsPerSec: m.stepsPerSec, stepP99Ms: m.burst.stepP99, purged, seconds };
  log(
    `${name}: ${Math.round(out.stepsPerSec)} steps/s, step p99 ${out.stepP99Ms.toFixed(1)} ms, ${purged} runs purged in ${seconds.toFixed(0)} s`,
  );
  return out;
}

/**
 * Purging while W2 runs: seeds `runs` finished runs spread over 30 days (each with its attempt and history),
 * measures W2 (its burst: throughput and step p99) without retention and with a 1-day retention policy, so
 * that the server's retention loop deletes the seeded runs (97% are older than a day) while W2 runs,
 * alternately. Reports each phase while purging against the phases on both sides of it, as the median ratio.
 */
export async function runPurgeBench(
  baseUrl: string,
  o: PurgeBenchOptions,
  log: (line: string) => void,
): Promise<void> {
  const dbUrl = await freshDatabase(baseUrl, o.dbName);
  const admin = connect(dbUrl, { max: 1, applicationName: 'weft-bench' });
  try {
    const seedStart = Date.now();
    await seedFinishedRuns(admin, o.runs, log);
    await seedRunRows(admin, log);
    log(`seeded ${o.runs} finished runs in ${((Date.now() - seedStart) / 1000).toFixed(0)} s`);
    // Alternated, `repeat` times, and without once more at the end: this machine's speed drifts, so each
    // phase while purging has runs without it on both sides, and the ratio is of medians.
    const phases: Phase[] = [];
    for (let i = 0; i < o.repeat; i++) {
      phases.push(await phase('W2 without purge', dbUrl, admin, o, log));
      await admin`INSERT INTO weft.retention (namespace, keep_ms) VALUES ('default', 86400000)`;
      phases.push(await phase('W2 while purging', dbUrl, admin, o, log));
      await admin`DELETE FROM weft.retention`;
    }
    phases.push(await phase('W2 without purge', dbUrl, admin, o, log));
    // Each phase while purging against the mean of the phases just before and after it (the machine's speed
    // drifts over minutes), then the median of those ratios.
    const bracketed = (read: (p: Phase) => number) =>
      median(
        phases
          .map((p, i) =>
            p.name === 'W2 while purging'
              ? read(p) / ((read(phases[i - 1]!) + read(phases[i + 1]!)) / 2)
              : null,
          )
          .filter((r): r is number => r !== null),
      );
    const throughput = bracketed((p) => p.stepsPerSec);
    const p99 = bracketed((p) => p.stepP99Ms);
    const during = phases.filter((p) => p.name === 'W2 while purging');
    const purgeRate = during.reduce((n, p) => n + p.purged, 0) / during.reduce((n, p) => n + p.seconds, 0);
    const lines = [
      `Purge while W2 runs (${o.w2Runs} runs of a 10-node chain), ${o.runs.toLocaleString('en')} finished runs seeded`,
      ...phases.map(
        (p) =>
          `${p.name.padEnd(26)} ${Math.round(p.stepsPerSec).toString().padStart(6)} steps/s  p99 ${p.stepP99Ms.toFixed(1).padStart(7)} ms  purged ${p.purged}`,
      ),
      `while purging / without (against the phases on both sides, median): throughput ${throughput.toFixed(2)}, step p99 ${p99.toFixed(2)}; purge rate ${Math.round(purgeRate)} runs/s`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    await mkdir(resolve(o.out), { recursive: true });
    const file = resolve(o.out, `purge-${new Date().toISOString().replaceAll(':', '-')}.json`);
    await writeFile(
      file,
      `${JSON.stringify({ options: o, phases, throughputRatio: throughput, p99Ratio: p99, purgeRate }, null, 2)}\n`,
    );
    process.stdout.write(`results: ${file}\n`);
  } finally {
    await admin.end();
  }
}
