import { ANY_NAMESPACE, type LeasedTask, type TaskService } from '@weft/engine';
import { type InProcessHandler, InProcessWorker } from '@weft/engine/internal';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Harness, harness } from './helpers.js';

// The in-process worker (the embedded executor, the server's system-task runner) reports like the HTTP
// worker: tasks finishing in one turn of the event loop in one `tasks.report` call, at most two calls in
// flight, each asking with `next` for the worker's room so that its transaction leases the next tasks; and
// it renews the leases of all its running tasks in one call per interval.

let h: Harness;
const workers: InProcessWorker[] = [];

beforeAll(async () => {
  h = await harness({ heartbeatMs: 100, leaseMs: 5000 });
});
afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop();
});
afterAll(async () => {
  await h?.close();
});

type ReportCall = Parameters<TaskService['report']>[0];

/** The engine's task service, with every call recorded (and reports held back by `delayMs`). */
function counted(delayMs = 0) {
  const calls = {
    reports: [] as ReportCall[],
    polled: 0,
    fromReports: 0,
    heartbeats: [] as number[],
    inFlight: 0,
    maxInFlight: 0,
  };
  const real = h.engine.tasks;
  const tasks = Object.create(real) as TaskService;
  tasks.report = async (request) => {
    calls.reports.push(request);
    calls.maxInFlight = Math.max(calls.maxInFlight, ++calls.inFlight);
    try {
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      const answer = await real.report(request);
      calls.fromReports += answer.leased.length;
      return answer;
    } finally {
      calls.inFlight--;
    }
  };
  tasks.poll = async (request) => {
    const leased = await real.poll(request);
    calls.polled += leased.length;
    return leased;
  };
  tasks.heartbeat = (namespace, worker, held) => {
    calls.heartbeats.push(held.length);
    return real.heartbeat(namespace, worker, held);
  };
  return { tasks, calls };
}

const warnings: string[] = [];
const logger = {
  info: () => {},
  error: () => {},
  warn: (_: object, message: string) => warnings.push(message),
};

function worker(tasks: TaskService, taskTypes: string[], concurrency: number, handler: InProcessHandler) {
  const w = new InProcessWorker(tasks, {
    namespace: 'default',
    name: 'in-process-test',
    taskTypes,
    concurrency,
    handler,
    logger,
    label: 'test worker',
  });
  workers.push(w);
  return w;
}

const done: InProcessHandler = async () => ({ kind: 'completed', output: null });

async function startRuns(definition: string, n: number, namespace = 'default'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await h.engine.runs.start({ namespace, definition, input: {} })).id);
  return ids;
}

async function allEnded(ids: readonly string[]): Promise<void> {
  await eventually(async () => {
    const runs = await Promise.all(ids.map((id) => h.engine.runs.get(id)));
    return runs.every((r) => r.status === 'completed') ? true : undefined;
  });
}

const chain = (name: string, type: string, length: number) =>
  [
    `name: ${name}`,
    'nodes:',
    ...Array.from({ length }, (_, i) => `  - { id: s${i}, task_type: ${type} }`),
    'edges:',
    ...Array.from({ length: length - 1 }, (_, i) => `  - { from: s${i}, to: s${i + 1} }`),
  ].join('\n');

describe('the in-process worker', () => {
  it('reports tasks finishing in one turn in one call, and runs the tasks that call leased without a poll', async () => {
    await h.engine.definitions.deploy('default', chain('iw-chain', 'iw.step', 5));
    const ids = await startRuns('iw-chain', 8);
    const { tasks, calls } = counted();
    worker(tasks, ['iw.step'], 8, done).start();
    await allEnded(ids);
    // The first poll leased the 8 first steps; they finished in one turn and went in one report.
    expect(calls.reports[0]!.reports).toHaveLength(8);
    expect(calls.reports.every((r) => (r.next?.max ?? 0) > 0)).toBe(true);
    expect(calls.polled + calls.fromReports).toBe(40);
    // Most steps came with the report of the step before them (a report whose run was busy elsewhere
    // leaves its next task to the queue and a poll).
    expect(calls.fromReports).toBeGreaterThanOrEqual(24);
  });

  it('keeps at most two report transactions in flight; reports finishing meanwhile wait for the next', async () => {
    await h.engine.definitions.deploy(
      'default',
      'name: iw-single\nnodes:\n  - { id: s, task_type: iw.one }\n',
    );
    const ids = await startRuns('iw-single', 30);
    const { tasks, calls } = counted(100);
    worker(tasks, ['iw.one'], 30, async () => {
      await new Promise((r) => setTimeout(r, Math.random() * 30));
      return { kind: 'completed', output: null };
    }).start();
    await allEnded(ids);
    expect(calls.maxInFlight).toBeLessThanOrEqual(2);
    expect(calls.reports.length).toBeLessThan(30);
    expect(calls.reports.flatMap((r) => r.reports)).toHaveLength(30);
  });

  it('renews the leases of all its running tasks in one call per interval', async () => {
    await h.engine.definitions.deploy(
      'default',
      'name: iw-slow\nnodes:\n  - { id: s, task_type: iw.slow }\n',
    );
    const ids = await startRuns('iw-slow', 5);
    const { tasks, calls } = counted();
    let release = () => {};
    const released = new Promise<void>((r) => (release = r));
    let started = 0;
    worker(tasks, ['iw.slow'], 5, async () => {
      started++;
      await released;
      return { kind: 'completed', output: null };
    }).start();
    await eventually(async () => (started === 5 && calls.heartbeats.length >= 3 ? true : undefined));
    release();
    await allEnded(ids);
    expect(calls.heartbeats.every((n) => n === 5)).toBe(true);
  });

  it('when stopped, aborts what runs and reports nothing', async () => {
    await h.engine.definitions.deploy(
      'default',
      'name: iw-stop\nnodes:\n  - { id: s, task_type: iw.stop }\n',
    );
    const ids = await startRuns('iw-stop', 3);
    const { tasks, calls } = counted();
    const signals: AbortSignal[] = [];
    const w = worker(tasks, ['iw.stop'], 3, async (_task, { signal }) => {
      signals.push(signal);
      await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
      return { kind: 'completed', output: null };
    });
    w.start();
    await eventually(async () => (signals.length === 3 ? true : undefined));
    await w.stop();
    await new Promise((r) => setTimeout(r, 50));
    expect(signals.every((s) => s.aborted)).toBe(true);
    expect(calls.reports).toHaveLength(0);
    for (const id of ids) expect((await h.engine.runs.get(id)).status).toBe('running');
    for (const id of ids) await h.engine.control.cancel(id, { by: 'test' });
  });

  it('makes a task signal only when its handler asks, aborted already if the task was', async () => {
    await h.engine.definitions.deploy(
      'default',
      'name: iw-late-signal\nnodes:\n  - { id: s, task_type: iw.late }\n',
    );
    const ids = await startRuns('iw-late-signal', 2);
    const { tasks } = counted();
    const aborts: { readonly signal: AbortSignal }[] = [];
    let finish = () => {};
    const finished = new Promise<void>((r) => (finish = r));
    const w = worker(tasks, ['iw.late'], 2, async (_task, abort) => {
      aborts.push(abort);
      await finished;
      return { kind: 'completed', output: null };
    });
    w.start();
    await eventually(async () => (aborts.length === 2 ? true : undefined));
    // One handler asks for its signal while running, the other only after the worker stopped.
    const early = aborts[0]!.signal;
    expect(early.aborted).toBe(false);
    const stopping = w.stop();
    await new Promise((r) => setTimeout(r, 20));
    expect(early.aborted).toBe(true);
    expect(aborts[1]!.signal.aborted).toBe(true);
    finish();
    await stopping;
    for (const id of ids) await h.engine.control.cancel(id, { by: 'test' });
  });

  it('logs a refused report (a task of a run cancelled while it ran)', async () => {
    await h.engine.definitions.deploy(
      'default',
      'name: iw-cancel\nnodes:\n  - { id: s, task_type: iw.cancel }\n',
    );
    const [id] = await startRuns('iw-cancel', 1);
    const { tasks } = counted();
    let running: (task: LeasedTask) => void = () => {};
    const leased = new Promise<LeasedTask>((r) => (running = r));
    let finish = () => {};
    const finished = new Promise<void>((r) => (finish = r));
    worker(tasks, ['iw.cancel'], 1, async (task) => {
      running(task);
      await finished;
      return { kind: 'completed', output: null };
    }).start();
    await leased;
    await h.engine.control.cancel(id!, { by: 'test' });
    finish();
    await eventually(async () => (warnings.includes('test worker: report refused') ? true : undefined));
  });

  it('serves every namespace with ANY_NAMESPACE, as the system-task runner does', async () => {
    const yaml = chain('iw-any', 'iw.any', 3);
    await h.engine.definitions.deploy('default', yaml);
    await h.engine.definitions.deploy('other', yaml);
    const ids = [...(await startRuns('iw-any', 4)), ...(await startRuns('iw-any', 4, 'other'))];
    const { tasks, calls } = counted();
    const w = new InProcessWorker(tasks, {
      namespace: ANY_NAMESPACE,
      name: 'in-process-any',
      taskTypes: ['iw.any'],
      concurrency: 8,
      handler: done,
      logger,
      label: 'any worker',
    });
    workers.push(w);
    w.start();
    await allEnded(ids);
    expect(calls.reports.flatMap((r) => r.reports)).toHaveLength(24);
    expect(calls.reports.length).toBeLessThan(24);
    // Its reports ask for its next tasks, and are handed them in either namespace: after the first poll,
    // most steps come with the report of the step before them.
    expect(calls.reports.every((r) => (r.next?.max ?? 0) > 0)).toBe(true);
    expect(calls.polled + calls.fromReports).toBe(24);
    expect(calls.fromReports).toBeGreaterThanOrEqual(12);
  });
});
