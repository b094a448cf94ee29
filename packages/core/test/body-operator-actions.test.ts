import { checkOperatorRequest, type OperatorRequest, type TaskState } from '@weft/core';
import { describe, expect, it } from 'vitest';
import { Sim, workflowOf } from './sim.js';

// Operator retry and rerun around loops and maps: work after a finished map runs again as usual; work
// that would re-open a loop or map is refused with a reason.

const batch = workflowOf(`
name: batch
nodes:
  - { id: prepare, task_type: t }
  - id: each
    kind: map
    items: input.items
    task: { task_type: item, retry: { max_attempts: 1 } }
  - { id: report, task_type: t, retry: { max_attempts: 1 }, input: { n: "$count(nodes.each.output)" } }
  - { id: audit, task_type: t, retry: { max_attempts: 1 } }
edges:
  - { from: prepare, to: [each, audit] }
  - { from: each, to: report }
`);

function check(sim: Sim, request: OperatorRequest) {
  return checkOperatorRequest(sim.workflow, sim.run, [...sim.tasks.values()] as TaskState[], request);
}

async function started(items: number[]): Promise<Sim> {
  const sim = new Sim(batch, { items });
  await sim.send({ kind: 'run_started' });
  await sim.send(sim.complete('prepare'));
  return sim;
}

describe('retry and rerun with a map', () => {
  it('retries a node after a finished map without touching the map, its items, or the sink count', async () => {
    const sim = await started([1, 2, 3]);
    for (const i of ['0', '1', '2']) await sim.send(sim.complete('each.task', Number(i) * 10, i));
    await sim.send(sim.complete('audit', 'ok'));
    await sim.send(sim.fail('report', false, 'printer on fire'));
    expect(sim.run.status).toBe('failed');
    const checked = check(sim, { kind: 'retry', by: 'ops' });
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    await sim.send(checked.value);
    expect(sim.run.status).toBe('running');
    expect(sim.task('report')).toMatchObject({ attempt: 2, status: 'queued', input: { n: 3 } });
    // No instance of a top-level node at an item's iteration.
    expect([...sim.tasks.values()].filter((t) => t.iteration !== '' && !t.nodeId.startsWith('each'))).toEqual(
      [],
    );
    expect(sim.task('each')).toMatchObject({ attempt: 1, status: 'completed', output: [0, 10, 20] });
    await sim.send(sim.complete('report', 'printed'));
    expect(sim.run.status).toBe('completed');
    expect(sim.count('run.completed')).toBe(1);
  });

  it('refuses a retry that would re-open the map, saying why, and a rerun from before it', async () => {
    const sim = await started([1, 2]);
    await sim.send(sim.complete('each.task', 0, '0'));
    await sim.send(sim.fail('each.task', false, 'bad item', '1'));
    expect(sim.run.status).toBe('failed');
    const retry = check(sim, { kind: 'retry', by: 'ops' });
    expect(retry.ok).toBe(false);
    if (retry.ok) return;
    expect(retry.error).toMatchObject({ code: 'loop_or_map', status: 409 });
    expect(retry.error.message).toMatch(
      /cannot be retried: it would run (the map "each"|"each.*", inside "each") again/,
    );
    // Decided anyway (a stale request), it changes nothing.
    expect(await sim.send({ kind: 'run_retried', by: 'ops' })).toEqual([]);
    const rerun = check(sim, { kind: 'rerun', nodeId: 'prepare', by: 'ops' });
    expect(rerun.ok || rerun.error.code).toBe('loop_or_map');
  });

  it('counts a map that ends the run once, not once per item, when a retry recounts the finished sinks', async () => {
    const wf = workflowOf(`
name: sinks
nodes:
  - { id: prepare, task_type: t }
  - { id: each, kind: map, items: input.items, task: { task_type: item } }
  - { id: audit, task_type: t, retry: { max_attempts: 1 } }
edges:
  - { from: prepare, to: [each, audit] }
`);
    const sim = new Sim(wf, { items: [1, 2, 3] });
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('prepare'));
    for (const i of ['0', '1', '2']) await sim.send(sim.complete('each.task', i, i));
    await sim.send(sim.fail('audit', false, 'no auditor'));
    const retry = check(sim, { kind: 'retry', by: 'ops' });
    if (!retry.ok) throw new Error(retry.error.message);
    await sim.send(retry.value);
    expect(sim.run).toMatchObject({ status: 'running', sinksDone: 1 });
    expect(sim.task('audit')).toMatchObject({ attempt: 2, status: 'queued' });
    await sim.send(sim.complete('audit', 'ok'));
    expect(sim.run.status).toBe('completed');
  });

  it('reruns from a node after the map', async () => {
    const sim = await started([1]);
    await sim.send(sim.complete('each.task', 5, '0'));
    await sim.send(sim.complete('audit', 'ok'));
    await sim.send(sim.complete('report', 'first'));
    expect(sim.run.status).toBe('completed');
    const rerun = check(sim, { kind: 'rerun', nodeId: 'report', by: 'ops' });
    expect(rerun.ok).toBe(true);
    if (!rerun.ok) return;
    await sim.send(rerun.value);
    expect(sim.task('report')).toMatchObject({ attempt: 2, status: 'queued' });
    await sim.send(sim.complete('report', 'second'));
    expect(sim.run.status).toBe('completed');
  });
});
