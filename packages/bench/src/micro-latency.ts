// Latency of one report round trip, in-process (no HTTP): 10 chains, one lane.
import { Engine } from '@weft/engine';
import { connect, migrate, PgStore } from '@weft/postgres';
import { w2 } from './workloads.js';

const url = process.argv[2]!;
const runs = Number(process.argv[3] ?? 10);
const admin = connect(url.replace(/\/[^/?]*(\?|$)/, '/postgres$1'), { max: 1 });
await admin.unsafe('DROP DATABASE IF EXISTS weft_micro WITH (FORCE)');
await admin.unsafe('CREATE DATABASE weft_micro');
await admin.end();
const sql = connect(url.replace(/\/[^/?]*(\?|$)/, '/weft_micro$1'), { max: 10 });
await migrate(sql);
const engine = new Engine({ store: new PgStore(sql), config: { crossProcessWakeups: false } });
await engine.start();
await engine.definitions.deploy('default', w2(1).yaml);
const lat: number[] = [];
for (let round = 0; round < 30; round++) {
  await Promise.all(
    Array.from({ length: runs }, () =>
      engine.runs.start({ namespace: 'default', definition: 'bench-w2', input: {} }),
    ),
  );
  let held = await engine.tasks.poll({
    namespace: 'default',
    worker: 'w',
    taskTypes: ['bench.noop'],
    max: runs,
    waitMs: 1000,
  });
  while (held.length > 0) {
    const t0 = performance.now();
    const reports = held.map((t) => ({
      runId: t.runId,
      taskId: t.id,
      attempt: t.attempt,
      leaseToken: t.leaseToken,
      nodeId: t.nodeId,
      iteration: t.iteration,
      outcome: { kind: 'completed' as const, output: null },
    }));
    const { leased } = await engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports,
      next: { taskTypes: ['bench.noop'], max: runs },
    });
    if (round >= 10) lat.push(performance.now() - t0);
    held = leased;
  }
}
lat.sort((a, b) => a - b);
console.log(
  `report round trip (in-process, ${runs} reports each): p50 ${lat[Math.floor(lat.length / 2)]!.toFixed(2)} ms, p90 ${lat[Math.floor(lat.length * 0.9)]!.toFixed(2)} ms`,
);
await engine.stop();
await sql.end();
