// A DBOS Transact application for the peer benchmark, in a process of its own: one registered workflow
// that runs a workload's no-op steps layer by layer (the steps of a layer at once), started in process
// with DBOS.startWorkflow, as DBOS's documentation shows for work started in the background.
import { DBOS } from '@dbos-inc/dbos-sdk';
import { inLanes, nowMs } from './contender.js';

/** What the parent sends: a burst of `runs` runs of `workload` after unmeasured bursts of `warm` runs each. */
interface Burst {
  readonly cmd: 'burst';
  readonly workload: string;
  readonly runs: number;
  readonly warm: readonly number[];
}

const layers: Record<string, string[][]> = JSON.parse(process.env.WEFT_PEER_LAYERS!);
// Counts the steps that ran, for the parent to check against the shape. Only the benchmark reads it.
let executed = 0;

async function noop(): Promise<null> {
  executed++;
  return null;
}

async function layered(workload: string): Promise<null> {
  for (const layer of layers[workload]!) {
    // Steps of a layer are started in a fixed order, so a recovered workflow finds them again.
    await Promise.all(
      layer.map((node) => DBOS.runStep(noop, { name: node, retriesAllowed: true, maxAttempts: 3 })),
    );
  }
  return null;
}

const workflow = DBOS.registerWorkflow(layered, { name: 'weftBenchLayered' });

async function startAndAwait(workload: string, count: number): Promise<void> {
  const results: Promise<null>[] = [];
  await inLanes(count, 1, async () => {
    const handle = await DBOS.startWorkflow(workflow)(workload);
    results.push(handle.getResult());
  });
  await Promise.all(results);
}

process.on('message', (m: Burst | { cmd: 'stop' }) => {
  if (m.cmd === 'stop') {
    void DBOS.shutdown().then(() => process.exit(0));
    return;
  }
  void (async () => {
    try {
      for (const runs of m.warm) await startAndAwait(m.workload, runs);
      executed = 0;
      const startedAt = nowMs();
      await startAndAwait(m.workload, m.runs);
      const endedAt = nowMs();
      process.send?.({ runs: m.runs, steps: executed, wallMs: endedAt - startedAt });
    } catch (e) {
      process.send?.({ error: e instanceof Error ? e.message : String(e) });
    }
  })();
});

DBOS.setConfig({
  name: 'weft-bench-peer',
  applicationVersion: '0.1.0',
  systemDatabaseUrl: process.env.WEFT_PEER_DATABASE_URL!,
  systemDatabasePoolSize: Number(process.env.WEFT_PEER_POOL),
  logLevel: 'error',
});
await DBOS.launch();
process.send?.({ ready: true });
