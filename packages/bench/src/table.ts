import type { BenchOptions } from './options.js';
import type { CpuPerStep, Latency } from './phases.js';
import { workerNodeFlags } from './processes.js';
import type { ProtocolFloor } from './protocol-floor.js';
import type { Measurement } from './run-workload.js';
import type { PathRatio } from './summary.js';

/** What the table shows. */
export interface TableInput {
  /** Each workload's summary on each path, workload by workload. */
  readonly rows: readonly Measurement[];
  readonly ratios: readonly PathRatio[];
  readonly floor: number | null;
  readonly floorFewMs: number | null;
  readonly protocol: ProtocolFloor | null;
  readonly options: BenchOptions;
  /** Tasks the embedded path's executor ran at once. */
  readonly embeddedConcurrency: number;
}

const HEADER = [
  'workload',
  'path',
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
  'worker own MB',
  'CPU ms/step srv/wrk/pg',
  'reads/event',
  'vs floor',
] as const;
const col = (name: (typeof HEADER)[number]) => HEADER.indexOf(name);
const f2 = (n: number) => n.toFixed(2);
const blank = (n: number) => Array.from({ length: n }, () => '');

/** A row of latencies only: the other columns belong to the workload's main row. */
function latencyRow(label: string, path: string, l: Latency): string[] {
  return [
    label,
    path,
    ...blank(5),
    f2(l.stepP50),
    f2(l.stepP99),
    f2(l.firstP50),
    f2(l.firstP99),
    l.load,
    ...blank(HEADER.length - 12),
  ];
}

/** A workload's main row on one path: the burst's figures and the paced phase's latency. */
function mainRow(r: Measurement, floor: number | null): string[] {
  const l = r.paced ?? r.burst;
  const embedded = r.path === 'embedded';
  return [
    r.workload,
    r.path,
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
    embedded ? '-' : r.workerRssMb.toFixed(0),
    embedded ? '-' : r.workerPrivateMb.toFixed(0),
    `${f2(r.cpuPerStep.server)}/${embedded ? '-' : f2(r.cpuPerStep.workers)}/${f2(r.cpuPerStep.postgres)}`,
    r.readsPerEvent.toFixed(1),
    floor ? `${((r.stepsPerSec / floor) * 100).toFixed(0)}%` : '',
  ];
}

/** A workload's embedded/server ratios, in the columns they belong to. */
function ratioRow(q: PathRatio): string[] {
  const x = (n: number) => (Number.isFinite(n) ? `x${n.toFixed(2)}` : '-');
  const cells = blank(HEADER.length);
  cells[0] = q.workload;
  cells[1] = 'emb/srv';
  cells[col('steps/s')] = x(q.stepsPerSec);
  cells[col('runs/s')] = x(q.runsPerSec);
  cells[col('step p50 ms')] = x(q.stepP50);
  cells[col('step p99 ms')] = x(q.stepP99);
  cells[col('first p50 ms')] = x(q.firstP50);
  cells[col('first p99 ms')] = x(q.firstP99);
  cells[col('commits/step')] = x(q.commitsPerStep);
  cells[col('stmts/step')] = x(q.statementsPerStep);
  cells[col('WAL B/step')] = x(q.walBytesPerStep);
  cells[col('server RSS MB')] = x(q.rssMb);
  cells[col('CPU ms/step srv/wrk/pg')] = `${x(q.cpuMsPerStep)} total`;
  return cells;
}

/** The results table, with the notes that say what each figure is. */
export function table(t: TableInput): string {
  const cells: string[][] = [];
  const workloads = [...new Set(t.rows.map((r) => r.workload))];
  for (const id of workloads) {
    for (const r of t.rows.filter((x) => x.workload === id)) {
      cells.push(mainRow(r, t.floor));
      for (const [label, extra] of [
        ['fixed', r.fixed],
        ['few', r.few],
        ['burst', r.burst],
      ] as const) {
        if (!extra || (label === 'burst' && !r.paced)) continue;
        cells.push(latencyRow(`${r.workload} ${label}`, r.path, extra));
      }
    }
    const ratio = t.ratios.find((q) => q.workload === id);
    if (ratio) cells.push(ratioRow(ratio));
  }
  for (const [label, extra] of [
    ['paced', t.protocol?.paced],
    ['fixed', t.protocol?.fixed],
    ['few', t.protocol?.few],
  ] as const) {
    if (extra) cells.push(latencyRow(`W2 floor ${label}`, 'server', extra));
  }
  const width = HEADER.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const left = new Set([0, 1, col('latency load')]);
  const line = (c: readonly string[]) =>
    c.map((x, i) => (left.has(i) ? x.padEnd(width[i]!) : x.padStart(width[i]!))).join('  ');
  return [line(HEADER), ...cells.map(line), '', ...notes(t)].join('\n');
}

function notes(t: TableInput): string[] {
  const o = t.options;
  const out = [
    'Throughput, commits, WAL and CPU: every run started at once (burst), until the last run is seen completed in PostgreSQL.',
    `Latency: runs arriving at a steady rate (${Math.round(o.pacedShare * 100)}% of the burst rate); "fixed": arriving at ${o.rate} steps/s on any machine and version;`,
    `"few": only ${o.few} runs in flight; "burst": latency while all runs queue.`,
    "worker own MB: a worker process's peak private memory (its heap, buffers and threads), without the Node binary's pages in its RSS, which every Node process on the host shares.",
    'reads/event: node instances the engine read per event decided; it stays flat as runs grow (W3: 102 tasks a run; W4: 5,001).',
  ];
  const cpuOf = (c: CpuPerStep | undefined) =>
    c ? `${c.server.toFixed(2)}/${c.workers.toFixed(2)}/${c.postgres.toFixed(2)}` : '-';
  const phases = t.rows.flatMap((r) =>
    (['paced', 'fixed', 'few'] as const).flatMap((k) =>
      r[k] ? [`${r.workload} ${r.path} ${k} ${cpuOf(r[k].cpuPerStep)}`] : [],
    ),
  );
  if (t.protocol)
    phases.push(
      ...(['paced', 'fixed', 'few'] as const).flatMap((k) =>
        t.protocol?.[k] ? [`W2 floor ${k} ${cpuOf(t.protocol[k].cpuPerStep)}`] : [],
      ),
    );
  if (phases.length > 0)
    out.push(`CPU ms/step srv/wrk/pg in the latency phases (smaller batches): ${phases.join(', ')}.`);
  if (t.rows.some((r) => r.path === 'embedded'))
    out.push(
      `embedded: createEngine on the same PostgreSQL in one process, ${t.embeddedConcurrency} tasks at once, runs started there and their results awaited; its CPU and RSS are in the server columns.`,
      'emb/srv: the embedded figure over the server one (latencies of the paced phase; CPU of every process and PostgreSQL).',
    );
  if (t.protocol)
    out.push(
      '"W2 floor": the same worker processes, HTTP client and arrivals against a server with no engine (one fenced statement and commit a report): the latency this machine allows the process layout.',
    );
  if (t.floor)
    out.push(
      `Floor: ${Math.round(t.floor)} steps/s, the SQL of a step alone, batched like Weft; "vs floor" is Weft's share of it.`,
    );
  if (t.floorFewMs !== null)
    out.push(
      `Floor with ${o.few} runs in flight over ${o.workers} connection(s), as in "few": ${t.floorFewMs.toFixed(2)} ms a step (mean), with no HTTP and no engine.`,
    );
  out.push(
    `Medians of ${o.repeat} run(s); ${o.workers} worker processes x ${o.concurrency} concurrent tasks, each run as node ${workerNodeFlags().join(' ')}.`,
  );
  return out;
}
