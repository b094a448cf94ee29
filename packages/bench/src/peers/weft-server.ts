import { WeftClient } from '@weft/client';
import { connect, freePort } from '@weft/postgres';
import { dropDatabase, freshDatabase } from '../fresh-database.js';
import { startBurst } from '../phases.js';
import { startServer, startWorker, type WorkerProcess, workerNodeFlags } from '../processes.js';
import type { Workload } from '../workloads.js';
import {
  type Contender,
  installed,
  type PeerEnv,
  type PeerRun,
  synchronousCommit,
  warmUpBursts,
} from './contender.js';
import { timeWeftBurst } from './weft-burst.js';

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
        processes: `1 server + ${env.workers} worker processes over HTTP (node ${workerNodeFlags().join(' ')})`,
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
    return await timeWeftBurst(
      admin,
      workload,
      {
        burst: (count) => startBurst(client, definition, count),
        timings: async () => (await Promise.all(workers.map((w) => w.dump()))).flat(),
      },
      warmUpBursts(env, workload),
    );
  } finally {
    await client.close();
    await Promise.all(workers.map((w) => w.stop()));
    await server.stop();
    await admin.end();
    await dropDatabase(env.baseUrl, `${env.dbName}_weft`);
  }
}
