import { Command } from 'commander';
import type { Path } from './run-workload.js';

/** The benchmark's options, as given on its command line. */
export interface BenchOptions {
  readonly workloads: string;
  readonly paths: string;
  readonly scale: number;
  readonly runs?: number;
  readonly mapItems: number;
  readonly repeat: number;
  readonly workers: number;
  readonly concurrency: number;
  readonly embeddedConcurrency?: number;
  readonly databaseUrl?: string;
  readonly out: string;
  readonly dbName: string;
  readonly floor: boolean;
  readonly pacedShare: number;
  readonly rate: number;
  readonly few: number;
  readonly list?: boolean;
  readonly listRuns: number;
  readonly listSamples: number;
  readonly purge?: boolean;
  readonly purgeRuns: number;
  readonly tracingCost?: boolean;
  readonly peers?: boolean;
  /** With --peers: unmeasured bursts of the measured size each contender runs first. */
  readonly peersWarmUp: number;
  readonly redisUrl: string;
  /** True when `--workloads` was not given (the peers then default to W1 and W2). */
  readonly defaultWorkloads: boolean;
}

/** Every path, in the order the table shows them. */
export const PATHS: readonly Path[] = ['server', 'embedded'];

const program = new Command('bench')
  .description(
    'Weft benchmark: workloads W1 to W4 through a server with worker processes over HTTP, and embedded (createEngine in one process)',
  )
  .option('--workloads <list>', 'which workloads, comma-separated', 'W1,W2,W3,W4')
  .option(
    '--paths <list>',
    'which paths, comma-separated: server (a weft server and worker processes over HTTP), embedded (createEngine in one process)',
    'server,embedded',
  )
  .option('--scale <x>', 'multiply the number of runs (0.05 for a quick check)', Number, 1)
  .option('--runs <n>', 'use this many runs for every workload instead', Number)
  .option('--map-items <n>', "items of W4's map (at most 10,000)", Number, 5000)
  .option('--repeat <n>', 'measure each workload this many times; the table shows medians', Number, 3)
  .option('--workers <n>', 'worker processes (server path)', Number, 2)
  .option('--concurrency <n>', 'tasks each worker runs at once (server path)', Number, 256)
  .option(
    '--embedded-concurrency <n>',
    "tasks the embedded path's executor runs at once (default: workers x concurrency, as the server path)",
    Number,
  )
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
  .option('--purge-runs <n>', 'finished runs to seed for --purge', Number, 1_000_000)
  .option(
    '--peers',
    'instead of the workloads: W1 and W2 (or --workloads) on Weft (server and embedded), DBOS Transact and BullMQ in interleaved rounds (--repeat)',
  )
  .option(
    '--peers-warm-up <bursts>',
    'with --peers: unmeasured bursts, each the size of the measured one, that every contender runs first',
    Number,
    3,
  )
  .option(
    '--redis-url <url>',
    'Redis for BullMQ with --peers',
    process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  );

/** Parses the command line (exits with the usage on a bad one). */
export function parseOptions(argv: readonly string[] = process.argv): BenchOptions {
  program.parse(argv);
  const o = {
    ...program.opts<Omit<BenchOptions, 'defaultWorkloads'>>(),
    defaultWorkloads: program.getOptionValueSource('workloads') === 'default',
  };
  for (const p of o.paths.split(',').map((x) => x.trim()))
    if (!PATHS.includes(p as Path))
      program.error(`unknown path "${p}" in --paths; choose from ${PATHS.join(', ')}`);
  return o;
}

/** The paths `--paths` names, in table order. */
export function chosenPaths(list: string): Path[] {
  const named = new Set(list.split(',').map((x) => x.trim()));
  return PATHS.filter((p) => named.has(p));
}
