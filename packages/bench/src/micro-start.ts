// Micro-benchmark of run starts: in-process engine, no workers.
import { microEngine } from './micro-engine.js';
import { w1 } from './workloads.js';

const url = process.argv[2]!;
const runs = Number(process.argv[3] ?? 500);
const lanes = Number(process.argv[4] ?? 32);
const { engine, close } = await microEngine(url, 20);
await engine.definitions.deploy('default', w1(1).yaml);
for (let i = 0; i < 20; i++)
  await engine.runs.start({ namespace: 'default', definition: 'bench-w1', input: {} });
const t0 = performance.now();
const c0 = process.cpuUsage();
let next = 0;
await Promise.all(
  Array.from({ length: lanes }, async () => {
    while (next++ < runs)
      await engine.runs.start({ namespace: 'default', definition: 'bench-w1', input: {} });
  }),
);
const wall = performance.now() - t0;
const cpu = process.cpuUsage(c0);
console.log(
  `${runs} starts in ${wall.toFixed(0)} ms: ${Math.round(runs / (wall / 1000))}/s; CPU ${((cpu.user + cpu.system) / 1000 / runs).toFixed(3)} ms/start`,
);
await close();
