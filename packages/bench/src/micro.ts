// Micro-benchmark of the engine's report path without HTTP: in-process engine, W2 chains; tracing as
// WEFT_BENCH_TRACING says (see micro-tracing.ts). The last line is the measurement as JSON.
import { completed, microEngine } from './micro-engine.js';
import { BENCH_TRACEPARENT, benchTracing } from './micro-tracing.js';
import { w2 } from './workloads.js';

const tracing = benchTracing();

const url = process.argv[2]!;
const runs = Number(process.argv[3] ?? 500);
const { engine, close } = await microEngine(url, 10);
const wl = w2(runs);
await engine.definitions.deploy('default', wl.yaml);
for (let i = 0; i < runs; i++)
  await engine.runs.start({
    namespace: 'default',
    definition: 'bench-w2',
    input: {},
    traceContext: BENCH_TRACEPARENT,
  });
const lanes = 2;
const batch = 64;
const t0 = performance.now();
const c0 = process.cpuUsage();
let steps = 0;
const lane = async () => {
  let held = await engine.tasks.poll({
    namespace: 'default',
    worker: 'w',
    taskTypes: ['bench.noop'],
    max: batch,
    waitMs: 0,
  });
  while (held.length > 0) {
    const reports = completed(held);
    const { leased } = await engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports,
      next: { taskTypes: ['bench.noop'], max: batch },
    });
    steps += reports.length;
    held =
      leased.length > 0
        ? leased
        : await engine.tasks.poll({
            namespace: 'default',
            worker: 'w',
            taskTypes: ['bench.noop'],
            max: batch,
            waitMs: 0,
          });
  }
};
await Promise.all(Array.from({ length: lanes }, lane));
const wall = performance.now() - t0;
const cpu = process.cpuUsage(c0);
console.log(
  `${steps} steps in ${wall.toFixed(0)} ms: ${Math.round(steps / (wall / 1000))} steps/s; engine CPU ${((cpu.user + cpu.system) / 1000 / steps).toFixed(3)} ms/step (user ${(cpu.user / 1000 / steps).toFixed(3)}); tracing ${tracing.mode}`,
);
await close();
await tracing.shutdown();
console.log(
  JSON.stringify({
    tracing: tracing.mode,
    steps,
    stepsPerSecond: steps / (wall / 1000),
    cpuMsPerStep: (cpu.user + cpu.system) / 1000 / steps,
    spans: tracing.spans(),
  }),
);
