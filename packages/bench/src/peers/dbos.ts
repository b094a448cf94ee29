import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dropDatabase, emptyDatabase } from '../fresh-database.js';
import type { Workload } from '../workloads.js';
import {
  type Contender,
  installed,
  layersOf,
  type PeerEnv,
  type PeerRun,
  synchronousCommit,
  warmUpBursts,
} from './contender.js';

const APP = fileURLToPath(new URL('./dbos-app.js', import.meta.url));

/** The system database's pool: as many connections as the Weft server's pool, so neither has more. */
const POOL = 20;

/**
 * DBOS Transact: workflows of steps run in the application's own process, checkpointed in its system
 * database on the same PostgreSQL server (a fresh database each time, which DBOS migrates on launch).
 */
export function dbosTransact(env: PeerEnv): Contender {
  const database = `${env.dbName}_dbos`;
  return {
    name: 'DBOS',
    kind: 'peer',
    async missing() {
      if (!(await installed('@dbos-inc/dbos-sdk')))
        return 'the package @dbos-inc/dbos-sdk is not installed (a devDependency of @weft/bench: run npm ci)';
      try {
        await emptyDatabase(env.baseUrl, database);
        return null;
      } catch (e) {
        return `PostgreSQL at the benchmark's server would not create a database for it: ${(e as Error).message}`;
      }
    },
    async settings() {
      return {
        version: `@dbos-inc/dbos-sdk ${await installed('@dbos-inc/dbos-sdk')}`,
        processes: '1 application process running its workflows (DBOS.startWorkflow)',
        concurrency: 'every started workflow at once; the steps of a layer at once (Promise.all)',
        pool: `systemDatabasePoolSize ${POOL}`,
        durability: `PostgreSQL, ${await synchronousCommit(env.baseUrl)}`,
      };
    },
    async run(workload) {
      const url = await emptyDatabase(env.baseUrl, database);
      const app = await startApp(url, workload);
      try {
        return await burst(app, workload, warmUpBursts(env, workload));
      } finally {
        await stop(app);
        await dropDatabase(env.baseUrl, database);
      }
    },
  };
}

async function startApp(url: string, workload: Workload): Promise<ChildProcess> {
  const child = fork(APP, [], {
    // DBOS's own use of pg prints a deprecation warning on every launch; it says nothing about the figures.
    execArgv: ['--no-deprecation'],
    env: {
      ...process.env,
      WEFT_PEER_DATABASE_URL: url,
      WEFT_PEER_POOL: String(POOL),
      WEFT_PEER_LAYERS: JSON.stringify({ [workload.id]: layersOf(workload) }),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`the DBOS application exited with code ${code}`)));
  });
  return child;
}

function burst(app: ChildProcess, workload: Workload, warm: readonly number[]): Promise<PeerRun> {
  return new Promise((resolve, reject) => {
    const exited = (code: number | null) =>
      reject(new Error(`the DBOS application exited with code ${code}`));
    app.once('exit', exited);
    app.once('message', (m: PeerRun | { error: string }) => {
      app.off('exit', exited);
      if ('error' in m) reject(new Error(`DBOS: ${m.error}`));
      else resolve(m);
    });
    app.send({ cmd: 'burst', workload: workload.id, runs: workload.runs, warm });
  });
}

async function stop(app: ChildProcess): Promise<void> {
  if (app.exitCode !== null) return;
  const exited = new Promise((r) => app.once('exit', r));
  app.send({ cmd: 'stop' });
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (app.exitCode === null) app.kill('SIGKILL');
}
