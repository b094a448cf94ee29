import { checkOperatorRequest, type OperatorRequest, type RunEvent, type TaskState } from '@weft/core';
import { describe, expect, it } from 'vitest';
import { Sim, workflowOf } from './sim.js';

const diamond = workflowOf(`
name: diamond
nodes:
  - { id: a, task_type: t }
  - { id: b, task_type: t, retry: { max_attempts: 1 } }
  - { id: c, task_type: t }
  - { id: d, task_type: t, input: { b: nodes.b.output, c: nodes.c.output } }
edges:
  - { from: a, to: [b, c] }
  - { from: b, to: d }
  - { from: c, to: d }
`);

// a -> b -> e -> d, a -> c -> d: a chain (single incoming edges) inside a diamond.
const long = workflowOf(`
name: long
nodes:
  - { id: a, task_type: t }
  - { id: b, task_type: t }
  - { id: e, task_type: t, input: { b: nodes.b.output } }
  - { id: c, task_type: t }
  - { id: d, task_type: t, input: { e: nodes.e.output, c: nodes.c.output } }
edges:
  - { from: a, to: [b, c] }
  - { from: b, to: e }
  - { from: e, to: d }
  - { from: c, to: d }
`);

const by = { by: 'ops@example.com', reason: 'incident 42' };

function check(sim: Sim, request: OperatorRequest) {
  return checkOperatorRequest(sim.workflow, sim.run, [...sim.tasks.values()] as TaskState[], request);
}

async function control(sim: Sim, request: OperatorRequest) {
  const checked = check(sim, request);
  if (!checked.ok) throw new Error(checked.error.message);
  return sim.send(checked.value);
}

async function finish(sim: Sim, nodes: string[], outputs: Record<string, unknown> = {}) {
  for (const n of nodes) await sim.send(sim.complete(n, (outputs[n] ?? n.toUpperCase()) as never));
}

describe('pause and resume', () => {
  it('pause records who and why; resume puts queued tasks back on the queue and asks for a decision', async () => {
    const sim = new Sim(diamond);
    await sim.send({ kind: 'run_started' });
    await finish(sim, ['a']);
    await control(sim, { kind: 'pause', ...by });
    expect(sim.run.status).toBe('paused');
    expect(sim.history.at(-1)).toEqual({ type: 'run.paused', data: { by: by.by, reason: by.reason } });
    await control(sim, { kind: 'resume', by: 'ops' });
    expect(sim.run.status).toBe('running');
    expect(sim.dispatched.sort()).toEqual(['b', 'c']);
    expect(sim.requested).toBe(1);
  });

  it('refuses actions that make no sense in the run state, naming the state', () => {
    const sim = new Sim(diamond);
    const refusal = (r: OperatorRequest) => {
      const c = check(sim, r);
      return c.ok ? null : c.error;
    };
    expect(refusal({ kind: 'resume', by: 'x' })).toMatchObject({ code: 'run_not_paused', status: 409 });
    expect(refusal({ kind: 'resume', by: 'x' })!.message).toBe(
      'run run-1 is running, not paused; there is nothing to resume',
    );
    expect(refusal({ kind: 'retry', by: 'x' })).toMatchObject({ code: 'run_not_finished' });
    expect(refusal({ kind: 'terminate', by: 'x' })).toMatchObject({ code: 'reason_required', status: 400 });
    expect(refusal({ kind: 'rerun', nodeId: 'zz', by: 'x' })).toMatchObject({
      code: 'node_not_found',
      status: 404,
    });
    sim.run = { ...sim.run, status: 'completed' };
    expect(refusal({ kind: 'pause', by: 'x' })!.message).toBe(
      'run run-1 is completed; only a running run can be paused',
    );
    expect(refusal({ kind: 'retry', by: 'x' })).toMatchObject({ code: 'run_completed' });
    expect(refusal({ kind: 'cancel', by: 'x' })).toMatchObject({ code: 'run_not_active' });
    expect(refusal({ kind: 'rerun', nodeId: 'a', by: 'x' })).toMatchObject({ code: 'node_not_started' });
  });
});

describe('terminate', () => {
  it('cancels open work as terminated and, on a paused run, asks for the decision that drains its inbox', async () => {
    const sim = new Sim(diamond);
    await sim.send({ kind: 'run_started' });
    await control(sim, { kind: 'pause', by: 'ops' });
    const actions = await control(sim, { kind: 'terminate', ...by });
    expect(actions.find((a) => a.kind === 'cancel_open_work')).toMatchObject({ mode: 'terminate' });
    expect(sim.run.status).toBe('terminated');
    expect(sim.task('a').status).toBe('cancelled');
    expect(sim.history.at(-1)).toEqual({ type: 'run.terminated', data: { by: by.by, reason: by.reason } });
    expect(sim.requested).toBe(1);
  });
});

describe('retry', () => {
  it('runs the failed and cancelled nodes again as new attempts, keeps completed outputs, and completes once', async () => {
    const sim = new Sim(diamond);
    await sim.send({ kind: 'run_started' });
    await finish(sim, ['a']);
    await sim.send(sim.fail('b', false, 'card declined'));
    expect(sim.run.status).toBe('failed');
    expect(sim.task('c').status).toBe('cancelled');
    await control(sim, { kind: 'retry', ...by });
    expect(sim.run.status).toBe('running');
    expect(sim.task('a')).toMatchObject({ attempt: 1, status: 'completed' });
    expect(sim.task('b')).toMatchObject({ attempt: 2, status: 'queued' });
    expect(sim.task('c')).toMatchObject({ attempt: 2, status: 'queued' });
    expect(sim.history.find((h) => h.type === 'run.retried')!.data).toEqual({ ...by, nodes: ['b', 'c'] });
    await finish(sim, ['b', 'c'], { b: 1, c: 2 });
    expect(sim.task('d')).toMatchObject({ attempt: 1, status: 'queued', input: { b: 1, c: 2 } });
    await finish(sim, ['d']);
    expect(sim.run.status).toBe('completed');
    expect(sim.count('run.completed')).toBe(1);
  });

  it('passes control on again from a node that finished after the run failed (its completion never moved the run)', async () => {
    const sim = new Sim(diamond);
    await sim.send({ kind: 'run_started' });
    await finish(sim, ['a']);
    const cDone = sim.complete('c', 2); // c finishes, but its event is decided after b failed the run
    await sim.pass([sim.fail('b', false), cDone]);
    expect(sim.run.status).toBe('failed');
    expect(sim.tasks.has('d\u0000')).toBe(false);
    await control(sim, { kind: 'retry', by: 'ops' });
    expect(sim.task('d')).toMatchObject({ status: 'waiting', arrivals: [{ from: 'c', taken: true }] });
    await finish(sim, ['b'], { b: 1 });
    expect(sim.task('d')).toMatchObject({ status: 'queued', input: { b: 1, c: 2 } });
    await finish(sim, ['d']);
    expect(sim.run.status).toBe('completed');
  });
});

describe('rerun', () => {
  it('runs a node and everything downstream again as new attempts; upstream outputs are kept', async () => {
    const sim = new Sim(long);
    await sim.send({ kind: 'run_started' });
    await finish(sim, ['a', 'b', 'c', 'e', 'd'], { b: 1, c: 2, e: 3 });
    expect(sim.run).toMatchObject({ status: 'completed', sinksDone: 1 });
    await control(sim, { kind: 'rerun', nodeId: 'b', ...by });
    expect(sim.run).toMatchObject({ status: 'running', sinksDone: 0 });
    expect(sim.task('b')).toMatchObject({ attempt: 2, status: 'queued' });
    expect(sim.task('e')).toMatchObject({ attempt: 2, status: 'waiting' });
    expect(sim.task('d')).toMatchObject({
      attempt: 2,
      status: 'waiting',
      arrivals: [{ from: 'c', taken: true }],
    });
    expect(sim.task('a').attempt).toBe(1);
    expect(sim.task('c').attempt).toBe(1);
    expect(sim.history.find((h) => h.type === 'run.rerun')!.data).toEqual({
      ...by,
      from: 'b',
      nodes: ['b', 'e', 'd'],
    });
    await finish(sim, ['b'], { b: 10 });
    expect(sim.task('e')).toMatchObject({ attempt: 2, status: 'queued', input: { b: 10 } });
    await finish(sim, ['e'], { e: 30 });
    expect(sim.task('d')).toMatchObject({ attempt: 2, status: 'queued', input: { e: 30, c: 2 } });
    await finish(sim, ['d'], { d: 'again' });
    expect(sim.run.status).toBe('completed');
    expect(sim.count('run.completed')).toBe(2);
    expect(sim.count('task.scheduled', 'd')).toBe(2);
  });

  it('reruns from an entry node', async () => {
    const sim = new Sim(diamond);
    await sim.send({ kind: 'run_started' });
    await finish(sim, ['a', 'b', 'c', 'd']);
    await control(sim, { kind: 'rerun', nodeId: 'a', by: 'ops' });
    expect(sim.queued()).toEqual(['a']);
    await finish(sim, ['a', 'b', 'c', 'd']);
    expect(sim.run.status).toBe('completed');
    expect([...sim.tasks.values()].map((t) => t.attempt)).toEqual([2, 2, 2, 2]);
  });
});

describe('finishing a task by hand', () => {
  it('completes a running task with the given output and continues', async () => {
    const sim = new Sim(diamond);
    await sim.send({ kind: 'run_started' });
    await control(sim, { kind: 'complete', nodeId: 'a', output: { ok: 1 }, ...by });
    expect(sim.task('a')).toMatchObject({ attempt: 1, status: 'completed', output: { ok: 1 } });
    expect(sim.history.map((h) => h.type)).toContain('task.completed_by_operator');
    expect(sim.queued().sort()).toEqual(['b', 'c']);
  });

  it('on a paused run, the effect waits in the inbox for resume', async () => {
    const sim = new Sim(diamond);
    await sim.send({ kind: 'run_started' });
    await control(sim, { kind: 'pause', by: 'ops' });
    await control(sim, { kind: 'complete', nodeId: 'a', output: 1, by: 'ops' });
    expect(sim.queued()).toEqual([]);
    expect(sim.inbox).toEqual([{ kind: 'node_completed', nodeId: 'a', iteration: '', attempt: 1 }]);
    await control(sim, { kind: 'resume', by: 'ops' });
    await sim.send(sim.inbox[0] as RunEvent);
    expect(sim.queued().sort()).toEqual(['b', 'c']);
  });

  it('skips a task with an output that downstream nodes read, and continues', async () => {
    const sim = new Sim(diamond);
    await sim.send({ kind: 'run_started' });
    await finish(sim, ['a', 'c'], { c: 2 });
    await control(sim, { kind: 'skip', nodeId: 'b', output: 7, ...by });
    expect(sim.task('b')).toMatchObject({ status: 'skipped', output: 7, error: { reason: 'skipped' } });
    expect(sim.task('d')).toMatchObject({ status: 'queued', input: { b: 7, c: 2 } });
  });

  it('fails a task by hand: not retryable by default, so the run fails', async () => {
    const sim = new Sim(diamond);
    await sim.send({ kind: 'run_started' });
    await control(sim, { kind: 'fail', nodeId: 'a', error: { message: 'vendor gone' }, by: 'ops' });
    expect(sim.run.status).toBe('failed');
    expect(sim.history.map((h) => h.type)).toEqual(
      expect.arrayContaining(['task.failed_by_operator', 'task.failed', 'run.failed']),
    );
  });

  it('finishing a task that waits for its retry creates a new attempt; the retry timer then finds it stale', async () => {
    const wf = workflowOf(
      'name: r\nnodes:\n  - { id: a, task_type: t, retry: { max_attempts: 3, delay: 1s } }\n',
    );
    const sim = new Sim(wf);
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.fail('a', true));
    expect(sim.timers).toHaveLength(1);
    await control(sim, { kind: 'complete', nodeId: 'a', output: 'by hand', by: 'ops' });
    expect(sim.task('a')).toMatchObject({ attempt: 2, status: 'completed', output: 'by hand' });
    expect(sim.run.status).toBe('completed');
    expect(check(sim, { kind: 'skip', nodeId: 'a', by: 'ops' })).toMatchObject({ ok: false });
  });

  it('refuses to finish a task that already finished, or a node that has not started', async () => {
    const sim = new Sim(diamond);
    await sim.send({ kind: 'run_started' });
    await finish(sim, ['a']);
    expect(check(sim, { kind: 'complete', nodeId: 'a', output: 1, by: 'x' })).toMatchObject({
      ok: false,
      error: {
        code: 'task_not_open',
        message: 'node "a" is already completed (attempt 1); rerun the run from it to run it again',
      },
    });
    expect(check(sim, { kind: 'skip', nodeId: 'd', by: 'x' })).toMatchObject({
      ok: false,
      error: { code: 'node_not_started' },
    });
  });
});
