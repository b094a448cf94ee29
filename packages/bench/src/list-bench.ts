import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { connect } from '@weft/postgres';
import { serve } from '@weft/server';
import { freshDatabase } from './fresh-database.js';
import { SEED_DEFINITIONS, seedFinishedRuns } from './list-seed.js';
import { quantile } from './stats.js';

/** One list call the console makes, measured. */
interface ListCase {
  readonly name: string;
  readonly path: string;
}

/** What one case measured. */
export interface ListResult {
  readonly name: string;
  readonly path: string;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly items: number;
}

const DAY = 86_400_000;

/** The calls of the runs page: its first page under each filter, a next page, and the bulk preview's count. */
function cases(runs: number, sampleId: string, cursor: string): ListCase[] {
  const at = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY).toISOString();
  const def = SEED_DEFINITIONS[2]!;
  return [
    { name: 'no filter', path: '/v1/runs?limit=50' },
    { name: 'next page (cursor)', path: `/v1/runs?limit=50&cursor=${cursor}` },
    { name: 'status=completed (90%)', path: '/v1/runs?limit=50&status=completed' },
    { name: 'status=failed (6%)', path: '/v1/runs?limit=50&status=failed' },
    { name: 'status=terminated (1%)', path: '/v1/runs?limit=50&status=terminated' },
    { name: 'definition', path: `/v1/runs?limit=50&definition=${def}` },
    { name: 'definition + version', path: `/v1/runs?limit=50&definition=${def}&version=2` },
    { name: 'definition + status=failed', path: `/v1/runs?limit=50&definition=${def}&status=failed` },
    { name: 'started in the last day', path: `/v1/runs?limit=50&started_after=${at(1)}` },
    { name: 'started before 15 days ago', path: `/v1/runs?limit=50&started_before=${at(15)}` },
    {
      name: 'started within one day, 20 days ago',
      path: `/v1/runs?limit=50&started_after=${at(21)}&started_before=${at(20)}`,
    },
    {
      name: 'status=failed + started before 15 days ago',
      path: `/v1/runs?limit=50&status=failed&started_before=${at(15)}`,
    },
    { name: 'run id (first 8 characters)', path: `/v1/runs?limit=50&run_id=${sampleId.slice(0, 8)}` },
    { name: 'run id (whole)', path: `/v1/runs?limit=50&run_id=${sampleId}` },
    { name: 'idempotency key', path: `/v1/runs?limit=50&idempotency_key=key-${Math.floor(runs / 20) * 10}` },
    { name: 'count: status=failed (bulk preview)', path: '/v1/runs/count?status=failed' },
    { name: 'count: definition + version', path: `/v1/runs/count?definition=${def}&version=2` },
  ];
}

async function measure(base: string, c: ListCase, samples: number): Promise<ListResult> {
  const times: number[] = [];
  let items = 0;
  for (let i = 0; i < samples + 10; i++) {
    const start = performance.now();
    const res = await fetch(`${base}${c.path}`);
    const body = (await res.json()) as { items?: unknown[]; count?: number; error?: { message: string } };
    const ms = performance.now() - start;
    if (!res.ok) throw new Error(`${c.name}: ${res.status} ${body.error?.message}`);
    items = body.items?.length ?? body.count ?? 0;
    if (i >= 10) times.push(ms); // the first ten warm the caches and the plans
  }
  return { name: c.name, path: c.path, p50Ms: quantile(times, 0.5), p99Ms: quantile(times, 0.99), items };
}

/**
 * The runs list on a big database: seeds `runs` finished runs (1,000,000 by default), serves them with a
 * real server, and measures each list call the console's runs page makes over HTTP: p50 and p99 of
 * `samples` calls each, one at a time.
 */
export async function runListBench(
  baseUrl: string,
  options: { runs: number; samples: number; dbName: string; out: string },
  log: (line: string) => void,
): Promise<ListResult[]> {
  const dbUrl = await freshDatabase(baseUrl, options.dbName);
  const sql = connect(dbUrl, { max: 1, applicationName: 'weft-bench' });
  const seedStart = Date.now();
  try {
    await seedFinishedRuns(sql, options.runs, log);
  } finally {
    await sql.end();
  }
  log(`seeded ${options.runs} runs in ${((Date.now() - seedStart) / 1000).toFixed(0)} s`);
  const server = await serve({
    databaseUrl: dbUrl,
    port: 0,
    logLevel: 'silent',
    console: null,
    auth: { mode: 'off' },
  });
  const results: ListResult[] = [];
  try {
    const first = (await (await fetch(`${server.url}/v1/runs?limit=50`)).json()) as {
      items: { id: string }[];
      next_cursor: string;
    };
    const sampleId = first.items[7]!.id;
    for (const c of cases(options.runs, sampleId, first.next_cursor)) {
      const r = await measure(server.url, c, options.samples);
      log(`${c.name}: p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms (${r.items})`);
      results.push(r);
    }
  } finally {
    await server.close();
  }
  await mkdir(resolve(options.out), { recursive: true });
  const file = resolve(options.out, `list-${new Date().toISOString().replaceAll(':', '-')}.json`);
  await writeFile(file, JSON.stringify({ runs: options.runs, samples: options.samples, results }, null, 2));
  printTable(options.runs, results);
  process.stdout.write(`results: ${file}\n`);
  return results;
}

function printTable(runs: number, results: ListResult[]): void {
  const width = Math.max(...results.map((r) => r.name.length));
  const lines = [
    `Runs list over HTTP, ${runs.toLocaleString('en')} finished runs (first page of 50 unless said)`,
    `${'call'.padEnd(width)}  ${'p50 ms'.padStart(7)}  ${'p99 ms'.padStart(7)}  rows`,
    ...results.map(
      (r) =>
        `${r.name.padEnd(width)}  ${r.p50Ms.toFixed(1).padStart(7)}  ${r.p99Ms.toFixed(1).padStart(7)}  ${r.items}`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
