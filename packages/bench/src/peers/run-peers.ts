import { mkdir, writeFile } from 'node:fs/promises';
import type { Workload } from '../workloads.js';
import { bullmq } from './bullmq.js';
import { type Contender, type PeerEnv, shownUrl } from './contender.js';
import { dbosTransact } from './dbos.js';
import { runRounds } from './rounds.js';
import { peersTable } from './table.js';
import { weftEmbedded } from './weft-embedded.js';
import { weftServer } from './weft-server.js';

/** What `--peers` is given besides the contenders' environment. */
export interface PeersOptions extends PeerEnv {
  readonly workloads: readonly Workload[];
  readonly repeat: number;
  readonly out: string;
  /** The PostgreSQL server's version line, for the JSON. */
  readonly postgres: string;
}

/** The contenders, in the order each round runs them. Another is one more line here. */
function contenders(env: PeerEnv): Contender[] {
  return [weftServer(env), weftEmbedded(env), dbosTransact(env), bullmq(env)];
}

/**
 * `npm run bench -- --peers`: W1 and W2 (or the workloads chosen) on Weft, DBOS Transact and BullMQ in
 * interleaved rounds; prints the table with each contender's settings and writes the JSON results.
 */
export async function runPeers(o: PeersOptions): Promise<void> {
  const all = contenders(o);
  const outcome = await runRounds(all, o.workloads, o.repeat, o.log);
  const settings: Record<string, Record<string, string>> = {};
  for (const c of all)
    if (outcome.ran.includes(c.name))
      settings[c.name] = await c.settings().catch((e: Error) => ({ settings: `unread: ${e.message}` }));
  console.log(peersTable(outcome, o.workloads, settings));
  await mkdir(o.out, { recursive: true });
  const file = `${o.out}/peers-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
  const options = {
    repeat: o.repeat,
    workers: o.workers,
    concurrency: o.concurrency,
    redisUrl: shownUrl(o.redisUrl),
  };
  const workloads = o.workloads.map((w) => ({ id: w.id, title: w.title, runs: w.runs, steps: w.steps }));
  await writeFile(
    file,
    `${JSON.stringify({ at: new Date().toISOString(), postgres: o.postgres, options, workloads, settings, ...outcome }, null, 2)}\n`,
  );
  o.log(`results written to ${file}`);
  console.log(`results: ${file}`);
}
