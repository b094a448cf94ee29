import { parseDefinition, type RunEvent } from '@weft/core';
import { describe, expect, it } from 'vitest';
import { Sim, workflowOf } from './sim.js';

const PARENT = `
name: parent
nodes:
  - { id: prep, task_type: t }
  - id: child
    kind: sub_workflow
    definition: kid
    version: 2
    input: { order: nodes.prep.output.order }
    retry: { max_attempts: 2, delay: 0s }
  - { id: after, task_type: t, input: { got: nodes.child.output.total } }
edges:
  - { from: prep, to: child }
  - { from: child, to: after }
`;

function childDone(sim: Sim, status: 'completed' | 'failed' | 'cancelled', output: unknown = null): RunEvent {
  const task = sim.task('child');
  const start = sim.effects.filter((e) => e.effect.kind === 'start_run').at(-1)!;
  if (start.effect.kind !== 'start_run') throw new Error('no start');
  return {
    kind: 'child_finished',
    nodeId: 'child',
    iteration: '',
    attempt: task.attempt,
    childRunId: start.effect.runId,
    status,
    output: output as never,
    error: status === 'completed' ? null : { message: 'it broke', reason: status },
  };
}

describe('sub_workflow node', () => {
  it('starts a child through an effect and completes with the child output', async () => {
    const sim = new Sim(workflowOf(PARENT));
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('prep', { order: 7 }));
    expect(sim.task('child')).toMatchObject({ status: 'running', attempt: 1, input: { order: 7 } });
    const start = sim.effects[0]!;
    expect(start).toMatchObject({
      task: { nodeId: 'child', iteration: '', attempt: 1 },
      effect: {
        kind: 'start_run',
        definition: 'kid',
        version: 2,
        input: { order: 7 },
        parent: { runId: 'run-1', nodeId: 'child', attempt: 1 },
        detached: false,
      },
    });
    await sim.send(childDone(sim, 'completed', { total: 42 }));
    expect(sim.task('child')).toMatchObject({ status: 'completed', output: { total: 42 } });
    expect(sim.task('after').input).toEqual({ got: 42 });
  });

  it('a failed child fails the attempt; the retry starts a new child with a new id', async () => {
    const sim = new Sim(workflowOf(PARENT));
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('prep', { order: 7 }));
    const first = childDone(sim, 'failed');
    await sim.send(first);
    expect(sim.task('child')).toMatchObject({ status: 'running', attempt: 2 });
    const starts = sim.effects.filter((e) => e.effect.kind === 'start_run');
    expect(starts).toHaveLength(2);
    const ids = starts.map((s) => (s.effect.kind === 'start_run' ? s.effect.runId : ''));
    expect(ids[0]).not.toEqual(ids[1]);
    expect(starts[1]!.task).toEqual({ nodeId: 'child', iteration: '', attempt: 2 });
    // The first child's outcome, arriving again, lands on nothing: its attempt is over.
    const stale = await sim.send({ ...first, status: 'completed' } as RunEvent);
    expect(stale).toEqual([]);
    await sim.send(childDone(sim, 'failed'));
    expect(sim.run.status).toBe('failed');
    expect(sim.history.at(-1)?.data).toMatchObject({
      error: {
        message: expect.stringMatching(/node "child" failed after 2 attempts: child run .* failed: it broke/),
      },
    });
  });

  it('a cancelled child fails the node without a retry', async () => {
    const sim = new Sim(workflowOf(PARENT));
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('prep', { order: 1 }));
    await sim.send(childDone(sim, 'cancelled'));
    expect(sim.run.status).toBe('failed');
    expect(sim.effects.filter((e) => e.effect.kind === 'start_run')).toHaveLength(1);
  });

  it('child ids are the same for the same attempt and time, and differ by attempt', async () => {
    const a = new Sim(workflowOf(PARENT));
    const b = new Sim(workflowOf(PARENT));
    for (const sim of [a, b]) {
      await sim.send({ kind: 'run_started' });
      await sim.send(sim.complete('prep', { order: 1 }));
    }
    expect(a.effects[0]).toEqual(b.effects[0]);
  });
});

describe('start_workflow, event and http nodes', () => {
  it('start_workflow completes at once with the run id it will start', async () => {
    const sim = new Sim(
      workflowOf(`
name: fire
nodes:
  - { id: go, kind: start_workflow, definition: other, input: { x: input.x } }
  - { id: next, task_type: t, input: { started: nodes.go.output.run_id } }
edges:
  - { from: go, to: next }
`),
      { x: 1 },
    );
    await sim.send({ kind: 'run_started' });
    const effect = sim.effects[0]!.effect;
    expect(effect).toMatchObject({ kind: 'start_run', detached: true, input: { x: 1 }, version: null });
    const runId = effect.kind === 'start_run' ? effect.runId : '';
    expect(sim.task('go')).toMatchObject({ status: 'completed', output: { run_id: runId } });
    expect(sim.task('next').input).toEqual({ started: runId });
  });

  it('event publishes through an effect with a stable id and completes', async () => {
    const wf = workflowOf(`
name: ev
nodes:
  - { id: tell, kind: event, sink: orders, topic: order.placed, payload: { id: input.id } }
`);
    const sims = [new Sim(wf, { id: 'o-1' }), new Sim(wf, { id: 'o-1' })];
    for (const sim of sims) await sim.send({ kind: 'run_started' });
    const [one, two] = sims.map((s) => s.effects[0]!.effect);
    expect(one).toMatchObject({
      kind: 'publish',
      sink: 'orders',
      topic: 'order.placed',
      message: { type: 'order.placed', data: { id: 'o-1' }, source: { run_id: 'run-1', node_id: 'tell' } },
    });
    expect(one).toEqual(two);
    expect(sims[0]!.run.status).toBe('completed');
    expect(sims[0]!.task('tell').output).toEqual({
      event_id: one!.kind === 'publish' ? one!.message.id : '',
    });
  });

  it('http queues a system task carrying the request; retries follow the policy', async () => {
    const sim = new Sim(
      workflowOf(`
name: call
nodes:
  - id: fetch
    kind: http
    method: POST
    url: "'http://example.test/orders/' & input.id"
    headers: { x-id: input.id }
    body: { id: input.id }
    timeout: 2s
    success: [200, 2xx]
    retry: { max_attempts: 2, delay: 0s }
`),
      { id: 5 },
    );
    await sim.send({ kind: 'run_started' });
    expect(sim.queued()).toEqual(['fetch']);
    expect(sim.task('fetch').input).toEqual({
      url: 'http://example.test/orders/5',
      method: 'POST',
      headers: { 'x-id': '5' },
      body: { id: 5 },
      timeout_ms: 2000,
      success: [200, '2xx'],
    });
    const created = sim.actions.find((a) => a.kind === 'create_task');
    expect(created).toMatchObject({ dispatch: { taskType: 'weft.http', timeoutMs: 7000 } });
    await sim.send(sim.fail('fetch', true, 'HTTP 503'));
    expect(sim.task('fetch')).toMatchObject({ status: 'queued', attempt: 2 });
  });

  it('an http URL that is not a URL fails the node with the reason', async () => {
    const sim = new Sim(workflowOf(`name: bad\nnodes:\n  - { id: f, kind: http, url: input.where }\n`), {
      where: 'nowhere',
    });
    await sim.send({ kind: 'run_started' });
    expect(sim.run.status).toBe('failed');
    expect(sim.task('f').error?.message).toMatch(/request.url: "nowhere" is not an http or https URL/);
  });
});

describe('parsing the new nodes', () => {
  it('reads them with their defaults, and on_status', () => {
    const parsed = parseDefinition(`
name: all
on_status: { url: "https://hooks.example/weft", statuses: [completed, failed] }
nodes:
  - { id: s, kind: sub_workflow, definition: kid }
  - { id: w, kind: start_workflow, definition: kid, version: 3 }
  - { id: e, kind: event, sink: bus }
  - { id: h, kind: http, url: "'https://x.example'" }
`);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.error));
    const [s, w, e, h] = parsed.value.nodes;
    expect(s).toMatchObject({
      kind: 'sub_workflow',
      version: null,
      retry: { maxAttempts: 1 },
      timeoutMs: null,
    });
    expect(w).toMatchObject({ kind: 'start_workflow', version: 3 });
    expect(e).toMatchObject({ kind: 'event', sink: 'bus', topic: null, payload: null });
    expect(h).toMatchObject({ kind: 'http', method: 'GET', timeoutMs: 30000, success: ['2xx'] });
    expect(parsed.value.onStatus).toEqual({
      kind: 'url',
      url: 'https://hooks.example/weft',
      statuses: ['completed', 'failed'],
    });
  });

  it('reports problems with their lines', () => {
    const parsed = parseDefinition(`name: bad
nodes:
  - { id: s, kind: sub_workflow }
  - { id: e, kind: event, sink: "no spaces" }
  - { id: h, kind: http, url: "'https://x'", method: FETCH, success: [700] }
  - { id: r, kind: event, sink: bus, payload: { x: nodes.nope.output } }
on_status: { url: "ftp://x" }
`);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    const lines = parsed.error.map((p) => `${p.line}: ${p.message}`);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^3: .*definition: is required/),
        expect.stringMatching(/^4: .*sink: "no spaces" is not a valid sink name/),
        expect.stringMatching(/^5: .*method: must be one of GET/),
        expect.stringMatching(/^5: .*success: must list status codes/),
        expect.stringMatching(/^6: payload reads nodes.nope, but there is no node "nope"/),
        expect.stringMatching(/^7: .*url: "ftp:\/\/x" is not an http or https URL/),
      ]),
    );
  });
});
