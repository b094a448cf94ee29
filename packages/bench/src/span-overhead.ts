// What Weft's tracing calls cost on their own, in the tracing mode WEFT_BENCH_TRACING names (see
// micro-tracing.ts): a task lease's span, a decision's span, and a request's server span, each timed over
// many calls. The last line is the measurement as JSON.
import type { LeasedTask, LockedRun } from '@weft/engine';
import { recordDecision, traceLeases } from '@weft/engine/internal';
import { BENCH_TRACEPARENT, benchTracing } from './micro-tracing.js';

const tracing = benchTracing();
const CALLS = 200_000;

const task: LeasedTask = {
  id: '00000000-0000-7000-8000-000000000001',
  runId: '00000000-0000-7000-8000-000000000002',
  nodeId: 'n1',
  iteration: '',
  attempt: 1,
  taskType: 'bench.noop',
  input: null,
  leaseToken: '00000000-0000-4000-8000-000000000003',
  leaseExpiresAt: new Date(),
  deadlineAt: null,
  definitionName: 'bench-w2',
  idempotencyKey: 'k',
  traceContext: BENCH_TRACEPARENT,
};
const run = {
  id: task.runId,
  namespace: 'default',
  definitionName: 'bench-w2',
  definitionVersion: 1,
  traceContext: BENCH_TRACEPARENT,
} as unknown as LockedRun;
const runs = new Map([[run.id, run]]);

/** Nanoseconds per call of `fn`, after a warm-up. */
function perCall(fn: () => void): number {
  for (let i = 0; i < CALLS / 10; i++) fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) fn();
  return Number(process.hrtime.bigint() - t0) / CALLS;
}

const tasks = [task];
const result = {
  tracing: tracing.mode,
  leaseSpanNs: perCall(() => traceLeases(tasks)),
  decisionSpanNs: perCall(() => recordDecision({ source: 'report' }, Date.now(), runs, null)),
  untracedLeaseNs: perCall(() => traceLeases([{ ...task, traceContext: null }])),
};
await tracing.shutdown();
console.log(JSON.stringify(result));
