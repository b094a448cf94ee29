import { connect } from '@weft/postgres';
import { startEmbeddedChild } from '../embedded-child.js';
import { dropDatabase, freshDatabase } from '../fresh-database.js';
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
 * Weft as a library, as the benchmark's embedded path runs it: `createEngine` on a `PgStore` in a process
 * of its own, no-op handlers run by its in-process executor, runs started there and their results awaited,
 * on a fresh database each time. As for every Weft contender, the burst ends when no run of it is open in
 * PostgreSQL.
 */
export function weftEmbedded(env: PeerEnv): Contender {
  return {
    name: 'Weft embedded',
    kind: 'weft',
    missing: async () => null,
    async settings() {
      return {
        version: `@weft/embedded ${await installed('@weft/embedded')} (this checkout)`,
        processes: '1 process: createEngine on a PgStore, handlers in process',
        concurrency: `${env.embeddedConcurrency} tasks at once`,
        pool: 'PgStore default',
        durability: `PostgreSQL, ${await synchronousCommit(env.baseUrl)}`,
      };
    },
    run: (workload) => runEmbeddedWeft(env, workload),
  };
}

async function runEmbeddedWeft(env: PeerEnv, workload: Workload): Promise<PeerRun> {
  const dbUrl = await freshDatabase(env.baseUrl, `${env.dbName}_weft_embedded`);
  const admin = connect(dbUrl, { max: 1, applicationName: 'weft-bench' });
  const definition = `bench-${workload.id.toLowerCase()}`;
  const child = await startEmbeddedChild(dbUrl, definition, env.embeddedConcurrency);
  try {
    await child.deploy(workload.yaml);
    return await timeWeftBurst(
      admin,
      workload,
      {
        burst: (n) => child.burst(n),
        timings: () => child.dump(),
      },
      warmUpBursts(env, workload),
    );
  } finally {
    await child.stop();
    await admin.end();
    await dropDatabase(env.baseUrl, `${env.dbName}_weft_embedded`);
  }
}
