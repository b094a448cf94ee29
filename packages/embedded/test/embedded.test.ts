import { defineStep, defineWorkflow, inputOf, type Json, outputOf } from '@weft/core';
import { createTestEngine, type Handler, handle, RunFailedError, TerminalError } from '@weft/embedded';
import { afterEach, describe, expect, it } from 'vitest';

const add = defineStep<{ a: number; b: number }, { sum: number }>('math.add');
const double = defineStep<{ n: number }, { n: number }>('math.double');
const flaky = defineStep<{ n: number }, { n: number }>('math.flaky');

const arithmetic = defineWorkflow<{ a: number; b: number }, { result: number }>('arithmetic')
  .task('add', add, { input: { a: inputOf('a'), b: inputOf('b') } })
  .task('double', double, { after: ['add'], input: { n: outputOf('add', 'sum') } })
  .output({ result: outputOf('double', 'n') })
  .build();

const engines: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.stop();
});

function testEngine(...handlers: Handler[]) {
  const engine = createTestEngine({ handlers });
  engines.push(engine);
  return engine;
}

describe('createEngine on the in-memory store', () => {
  it('runs a code-first workflow with plain async handlers and returns its output', async () => {
    const engine = testEngine(
      handle(add, async ({ a, b }) => ({ sum: a + b })),
      handle(double, ({ n }) => ({ n: n * 2 })),
    );
    await expect(engine.run(arithmetic, { a: 2, b: 3 })).resolves.toEqual({ result: 10 });
    const handle2 = await engine.start(arithmetic, { a: 1, b: 1 });
    await expect(handle2.result()).resolves.toEqual({ result: 4 });
    const history = await engine.engine.context.store.readHistory(handle2.id, 0, 100);
    expect(history.map((h) => h.type)).toContain('run.completed');
  });

  it('lets a handler log on the in-memory store, which keeps no task logs: the lines are dropped', async () => {
    const engine = testEngine(
      handle(add, async ({ a, b }, ctx) => {
        ctx.log.info('adding', { a, b });
        return { sum: a + b };
      }),
      handle(double, ({ n }) => ({ n: n * 2 })),
    );
    await expect(engine.run(arithmetic, { a: 1, b: 2 })).resolves.toEqual({ result: 6 });
    await expect(
      engine.engine.logs.list({ runId: '01900000-0000-7000-8000-000000000042', limit: 1 }),
    ).rejects.toMatchObject({
      code: 'logs_unavailable',
    });
  });

  it('retries by the policy, with backoff that the manual clock makes due at once', async () => {
    let calls = 0;
    const wf = defineWorkflow('retrying')
      .task('f', flaky, {
        input: { n: 1 },
        retry: { maxAttempts: 3, backoff: 'exponential', delay: '1h', maxDelay: '3h' },
      })
      .build();
    const seen: { taskId: string; key: string }[] = [];
    const engine = testEngine(
      handle(flaky, ({ n }, ctx) => {
        calls++;
        seen.push({ taskId: ctx.taskId, key: ctx.idempotencyKey });
        if (calls < 3) throw new Error(`try ${calls} failed`);
        return { n };
      }),
    );
    const run = await engine.start(wf, {});
    const failures = async () =>
      (await engine.engine.context.store.readHistory(run.id, 0, 100)).filter((h) => h.type === 'task.failed')
        .length;
    await eventually(async () => (await failures()) === 1);
    engine.advance('1h');
    await eventually(async () => (await failures()) === 2);
    engine.advance('2h');
    await expect(run.result()).resolves.toEqual({ f: { n: 1 } });
    expect(calls).toBe(3);
    // Each attempt is a new task, with the one side-effect key of the node.
    expect(new Set(seen.map((s) => s.taskId)).size).toBe(3);
    expect(new Set(seen.map((s) => s.key))).toEqual(new Set([seen[0]!.key]));
    expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('fails without retrying on a TerminalError, and reports the run failed', async () => {
    let calls = 0;
    const engine = testEngine(
      handle(flaky, () => {
        calls++;
        throw new TerminalError('card declined');
      }),
    );
    const wf = defineWorkflow('terminal')
      .task('f', flaky, { retry: { maxAttempts: 5 } })
      .build();
    const error = await engine.run(wf, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunFailedError);
    expect((error as RunFailedError).error).toMatchObject({
      node: 'f',
      message: expect.stringContaining('card declined'),
    });
    expect(calls).toBe(1);
  });

  it('waits on timers and signals, and fans out over a map', async () => {
    const wf = defineWorkflow('waiting')
      .wait('nap', { duration: '2d' })
      .waitForEvent('approval', { after: ['nap'], event: 'approved', timeout: '7d' })
      .map('each', {
        after: ['approval'],
        items: 'input.numbers',
        body: (b) => b.task('d', double, { input: { n: 'item' } }),
      })
      .output({ doubled: 'nodes.each.output.d.n', by: 'nodes.approval.output.by' })
      .build();
    const engine = testEngine(handle(double, ({ n }) => ({ n: n * 2 })));
    const run = await engine.start(wf, { numbers: [1, 2, 3] });
    await eventually(async () => (await engine.engine.runs.get(run.id)).status === 'running');
    engine.advance('2d');
    // Sent before or after the wait is reached: a signal is kept until a node waits for it.
    const sent = await engine.signal(run.id, 'approved', { by: 'ada' });
    expect(['delivered', 'kept']).toContain(sent.outcome);
    await expect(run.result()).resolves.toEqual({ doubled: [2, 4, 6], by: 'ada' });
  });

  it('compensates completed steps in reverse order when a later step fails for good', async () => {
    const book = defineStep<{ what: string }, { ref: string }>('trip.book');
    const cancel = defineStep<{ ref: string }, null>('trip.cancel');
    const pay = defineStep('trip.pay');
    const trip = defineWorkflow('trip')
      .task('flight', book, {
        input: { what: "'flight'" },
        compensate: { step: cancel, input: { ref: outputOf('flight', 'ref') } },
      })
      .task('hotel', book, { after: ['flight'], input: { what: "'hotel'" }, compensate: { step: cancel } })
      .task('payment', pay, { after: ['hotel'], retry: { maxAttempts: 1 } })
      .build();
    const cancelled: string[] = [];
    const engine = testEngine(
      handle(book, ({ what }) => ({ ref: `${what}-1` })),
      handle(cancel, ({ ref }) => {
        cancelled.push(ref);
        return null;
      }),
      handle(pay, () => {
        throw new Error('card declined');
      }),
    );
    const error = (await engine.run(trip, {}).catch((e: unknown) => e)) as RunFailedError;
    expect(error).toBeInstanceOf(RunFailedError);
    expect(error.run.status).toBe('failed');
    expect(error.error).toMatchObject({
      node: 'payment',
      compensation: { status: 'completed', compensated: ['hotel', 'flight'] },
    });
    expect(cancelled).toEqual(['hotel-1', 'flight-1']);
  });

  it('fences a handler that outlived its lease: its late report is refused, the next attempt counts', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    let calls = 0;
    const engine = testEngine(
      handle(double, async ({ n }, ctx) => {
        calls++;
        if (ctx.attempt === 1) await held; // a slow first attempt
        return { n: n * 10 * ctx.attempt };
      }),
    );
    const wf = defineWorkflow('slow')
      .task('d', double, { input: { n: 1 }, retry: { maxAttempts: 2, delay: '1s' } })
      .build();
    const run = await engine.start(wf, {});
    await eventually(async () => calls === 1);
    // The lease (90 s) runs out in store time; the attempt fails as lease_expired and is retried.
    engine.advance('2m');
    const history = () => engine.engine.context.store.readHistory(run.id, 0, 100);
    await eventually(async () => (await history()).some((h) => h.type === 'task.failed'));
    engine.advance('1s');
    await expect(run.result()).resolves.toEqual({ d: { n: 20 } });
    release();
    await eventually(async () => (await history()).some((h) => h.type === 'task.report_refused'));
    expect((await engine.engine.runs.get(run.id)).output).toEqual({ d: { n: 20 } });
  });

  it('types handlers by their steps', () => {
    // @ts-expect-error the handler must return the step's output ({ sum: number })
    handle(add, ({ a }) => ({ total: a }));
    // @ts-expect-error the input has no field c
    handle(add, ({ c }) => ({ sum: c }));
    expect(handle(add, ({ a, b }) => ({ sum: a + b })).taskType).toBe('math.add');
  });

  it('ends compensation_failed when a compensation fails for good, leaving the rest undone', async () => {
    const engine = testEngine(
      handle(add, ({ a, b }) => ({ sum: a + b })),
      handle(double, () => {
        throw new TerminalError('cannot undo');
      }),
      handle(flaky, () => {
        throw new TerminalError('no');
      }),
    );
    const yaml = `
name: undo-fails
nodes:
  - { id: first, task_type: math.add, input: { a: 1, b: 2 }, compensate: { task_type: math.add, input: { a: 0, b: 0 } } }
  - { id: second, task_type: math.add, input: { a: 3, b: 4 }, compensate: { task_type: math.double } }
  - { id: third, task_type: math.flaky }
edges:
  - { from: first, to: second }
  - { from: second, to: third }
`;
    await engine.deploy(yaml);
    const error = (await engine.run('undo-fails', {}).catch((e: unknown) => e)) as RunFailedError;
    expect(error).toBeInstanceOf(RunFailedError);
    expect(error.error).toMatchObject({
      reason: 'compensation_failed',
      node: 'third',
      compensation: { status: 'failed', failed: 'second', compensated: [], pending: ['first'] },
    });
    const history = await engine.engine.context.store.readHistory(error.run.id, 0, 100);
    expect(history.map((h) => h.type)).toContain('run.compensation_failed');
  });

  it('lets external workers run task types it has no handler for, when told so', async () => {
    const engine = createTestEngine({
      handlers: [handle(add, ({ a, b }) => ({ sum: a + b }))],
      externalTaskTypes: ['math.double'],
    });
    engines.push(engine);
    const run = await engine.start(arithmetic, { a: 1, b: 2 });
    const [task] = await eventuallyValue(() =>
      engine.engine.tasks.poll({
        namespace: 'default',
        worker: 'http-worker',
        taskTypes: ['math.double'],
        max: 1,
        waitMs: 100,
      }),
    );
    await engine.engine.tasks.report({
      namespace: 'default',
      worker: 'http-worker',
      reports: [
        {
          runId: task!.runId,
          taskId: task!.id,
          attempt: task!.attempt,
          leaseToken: task!.leaseToken,
          outcome: { kind: 'completed', output: { n: 99 } },
        },
      ],
    });
    await expect(run.result()).resolves.toEqual({ result: 99 });
  });

  it('checks a definition before it runs: every task type needs a handler', async () => {
    const engine = testEngine(handle(add, ({ a, b }) => ({ sum: a + b })));
    await expect(engine.run(arithmetic, { a: 1, b: 2 })).rejects.toMatchObject({
      code: 'invalid_definition',
      message: expect.stringContaining('no handler is registered for task type "math.double"'),
    });
    // Nothing was deployed: the check runs before the definition is stored.
    expect(await engine.engine.context.store.getDefinition('default', 'arithmetic')).toBeNull();
  });

  it('runs a sub-workflow as a child run', async () => {
    const parent = defineWorkflow('parent')
      .subWorkflow('child', { workflow: arithmetic, input: { a: 20, b: 1 } })
      .output({ got: outputOf('child', 'result') })
      .build();
    const engine = testEngine(
      handle(add, async ({ a, b }) => ({ sum: a + b })),
      handle(double, ({ n }) => ({ n: n * 2 })),
    );
    await engine.deploy(arithmetic);
    await expect(engine.run(parent, {} as Json)).resolves.toEqual({ got: 42 });
  });
});

async function eventuallyValue<T>(get: () => Promise<T[]>, ms = 5000): Promise<T[]> {
  const until = Date.now() + ms;
  for (;;) {
    const got = await get();
    if (got.length > 0) return got;
    if (Date.now() > until) throw new Error('timed out');
  }
}

async function eventually(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}
