// Latency of one report round trip, in-process (no HTTP): 10 chains, one lane.
import { completed, microEngine } from './micro-engine.js';
import { w2 } from './workloads.js';

const url = process.argv[2]!;
const runs = Number(process.argv[3] ?? 10);
const { engine, close } = await microEngine(url, 10);
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
    const reports = completed(held);
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
await close();
