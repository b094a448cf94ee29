import { WeftClient } from '@weft/client';
import { connect, freePort } from '@weft/postgres';
import type postgres from 'postgres';
import { whenAllRunsClosed } from '../completion-watch.js';
import { freshDatabase } from '../fresh-database.js';
import { startBurst } from '../phases.js';
import { startServer, startWorker, type WorkerProcess } from '../processes.js';
import type { Workload } from '../workloads.js';
import {
  type Contender,
  installed,
  nowMs,
  type PeerEnv,
  type PeerRun,
  synchronousCommit,
  warmUpRuns,
} from './contender.js';

/**
 * Weft as `npm run bench` runs it: a `weft server` process and worker processes over HTTP with no-op
 * handlers, on a fresh database each time. The burst's end is seen in PostgreSQL: the moment no run of it
 * is still open, i.e. the last run committed completed.
 */
export function weftServer(env: PeerEnv): Contender {
  return {
    name: 'Weft server',
    kind: 'weft',
    missing: async () => null,
    async settings() {
      return {
        version: `@weft/server ${await installed('@weft/server')} (this checkout)`,
        processes: `1 server + ${env.workers} worker processes over HTTP`,
        concurrency: `${env.concurrency} tasks per worker process`,
        pool: 'weft server default (20 connections)',
        durability: `PostgreSQL, ${await synchronousCommit(env.baseUrl)}`,
      };
    },
    run: (workload) => runWeft(env, workload),
  };
}

async function runWeft(env: PeerEnv, workload: Workload): Promise<PeerRun> {
  const dbUrl = await freshDatabase(env.baseUrl, `${env.dbName}_weft`);
  const admin = connect(dbUrl, { max: 1, applicationName: 'weft-bench' });
  const server = await startServer(dbUrl, await freePort());
  const workers: WorkerProcess[] = [];
  const client = new WeftClient({ url: server.url, connections: 32 });
  try {
    for (let i = 0; i < env.workers; i++)
      workers.push(await startWorker(server.url, `peer-${i + 1}`, env.concurrency));
    await client.deploy(workload.yaml);
    const definition = `bench-${workload.id.toLowerCase()}`;
    await startBurst(client, definition, warmUpRuns(workload));
    await whenAllRunsClosed(admin);
    await Promise.all(workers.map((w) => w.dump()));

    const startedAt = nowMs();
    const sent = await startBurst(client, definition, workload.runs);
    const endedAt = await whenAllRunsClosed(admin);
    const timings = (await Promise.all(workers.map((w) => w.dump()))).flat();
    const failed = await failedRuns(admin);
    if (failed > 0) throw new Error(`${failed} Weft run(s) failed during the burst`);
    return {
      runs: sent.size,
      steps: timings.filter((t) => sent.has(t[0])).length,
      wallMs: endedAt - startedAt,
    };
  } finally {
    await client.close();
    await Promise.all(workers.map((w) => w.stop()));
    await server.stop();
    await admin.end();
  }
}

async function failedRuns(admin: postgres.Sql): Promise<number> {
  const [row] = await admin<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM weft.runs WHERE status <> 'completed'`;
  return row!.n;
}
