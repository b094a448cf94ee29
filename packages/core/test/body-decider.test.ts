import { describe, expect, it } from 'vitest';
import { Sim, workflowOf } from './sim.js';

describe('loop', () => {
  const polling = workflowOf(`
name: poll
nodes:
  - { id: start, task_type: t }
  - id: poll
    kind: loop
    max_iterations: 5
    while: "nodes.check.output.status = 'pending'"
    body:
      nodes:
        - id: check
          task_type: status
          input: { pass: index, before: previous, order: nodes.start.output.order }
      output: { status: nodes.check.output.status, pass: index }
  - { id: after, task_type: t, input: { passes: "$count(nodes.poll.output)", last: "nodes.poll.output[-1].status" } }
edges:
  - { from: start, to: poll }
  - { from: poll, to: after }
`);

  it('repeats the body while the condition holds; each pass is its own iteration; every output is kept', async () => {
    const sim = new Sim(polling);
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('start', { order: 7 }));
    expect(sim.queuedAt()).toEqual(['check[0]']);
    expect(sim.task('check', '0').input).toEqual({ pass: 0, before: null, order: 7 });
    await sim.send(sim.complete('check', { status: 'pending' }, '0'));
    expect(sim.queuedAt()).toEqual(['check[1]']);
    expect(sim.task('check', '1').input).toEqual({
      pass: 1,
      before: { status: 'pending', pass: 0 },
      order: 7,
    });
    await sim.send(sim.complete('check', { status: 'pending' }, '1'));
    await sim.send(sim.complete('check', { status: 'done' }, '2'));
    expect(sim.task('poll')).toMatchObject({
      status: 'completed',
      output: [
        { status: 'pending', pass: 0 },
        { status: 'pending', pass: 1 },
        { status: 'done', pass: 2 },
      ],
    });
    expect(sim.task('after').input).toEqual({ passes: 3, last: 'done' });
  });

  it('fails when the condition still holds after max_iterations passes', async () => {
    const sim = new Sim(polling);
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('start', { order: 7 }));
    for (let i = 0; i < 5; i++) await sim.send(sim.complete('check', { status: 'pending' }, String(i)));
    expect(sim.run.status).toBe('failed');
    expect(sim.history.at(-1)).toMatchObject({
      data: {
        error: {
          message: 'node "poll" failed: its while condition still held after 5 passes (max_iterations: 5)',
        },
      },
    });
  });

  it('fails naming the path when the condition reads something missing', async () => {
    const sim = new Sim(polling);
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('start', { order: 7 }));
    await sim.send(sim.complete('check', { state: 'pending' }, '0'));
    expect(sim.run.status).toBe('failed');
    expect(JSON.stringify(sim.history.at(-1))).toContain(
      'body.output.status: nodes.check.output.status does not exist: nodes.check.output has no \\"status\\" (it has state)',
    );
  });
});

describe('map', () => {
  const charge = workflowOf(`
name: charge
nodes:
  - id: each
    kind: map
    items: input.orders
    concurrency: 2
    task: { task_type: charge, input: { order: item.id, n: index } }
  - { id: total, kind: transform, value: "$sum([nodes.each.output.amount])" }
edges:
  - { from: each, to: total }
`);

  it('runs one task per item, at most `concurrency` at once, and outputs in item order', async () => {
    const orders = [1, 2, 3, 4, 5].map((id) => ({ id }));
    const sim = new Sim(charge, { orders });
    await sim.send({ kind: 'run_started' });
    expect(sim.queuedAt()).toEqual(['each.task[0]', 'each.task[1]']);
    expect(sim.task('each.task', '1').input).toEqual({ order: 2, n: 1 });
    // Out of order: item 1 first.
    await sim.send(sim.complete('each.task', { amount: 20 }, '1'));
    expect(sim.queuedAt()).toEqual(['each.task[0]', 'each.task[2]']);
    await sim.send(sim.complete('each.task', { amount: 30 }, '2'));
    await sim.send(sim.complete('each.task', { amount: 10 }, '0'));
    await sim.send(sim.complete('each.task', { amount: 50 }, '4'));
    await sim.send(sim.complete('each.task', { amount: 40 }, '3'));
    expect(sim.task('each').output).toEqual([10, 20, 30, 40, 50].map((amount) => ({ amount })));
    expect(sim.task('total').output).toBe(150);
    expect(sim.run.status).toBe('completed');
  });

  it('completes at once for an empty list', async () => {
    const sim = new Sim(charge, { orders: [] });
    await sim.send({ kind: 'run_started' });
    expect(sim.task('each')).toMatchObject({ status: 'completed', output: [] });
    expect(sim.task('total').output).toBe(0);
    expect(sim.run.status).toBe('completed');
  });

  it('fails with a hint when items is not a list', async () => {
    const sim = new Sim(charge, { orders: { id: 1 } });
    await sim.send({ kind: 'run_started' });
    expect(sim.run.status).toBe('failed');
    expect(JSON.stringify(sim.history.at(-1))).toContain(
      'items must give a list, not an object (to map over a filter that may match one item or none, wrap it in a list: [input.orders])',
    );
  });

  it('runs a body sub-graph per item; nodes in it read the same item and the nodes around the map', async () => {
    const wf = workflowOf(`
name: pipeline
nodes:
  - { id: setup, kind: transform, value: "{'rate': 2}" }
  - id: lines
    kind: map
    items: input.lines
    body:
      nodes:
        - { id: price, kind: transform, value: "item.qty * nodes.setup.output.rate" }
        - { id: check, kind: switch, expression: "nodes.price.output > 5" }
        - { id: big, task_type: review, input: { amount: nodes.price.output, line: index } }
        - { id: small, kind: noop }
        - { id: merge, kind: noop }
      edges:
        - { from: price, to: check }
        - { from: check, to: big, case: true }
        - { from: check, to: small, case: false }
        - { from: big, to: merge }
        - { from: small, to: merge }
      output: { price: nodes.price.output }
edges:
  - { from: setup, to: lines }
`);
    const sim = new Sim(wf, { lines: [{ qty: 1 }, { qty: 4 }, { qty: 2 }] });
    await sim.send({ kind: 'run_started' });
    expect(sim.queuedAt()).toEqual(['big[1]']);
    expect(sim.task('big', '1').input).toEqual({ amount: 8, line: 1 });
    expect(sim.task('lines').status).toBe('running');
    await sim.send(sim.complete('big', 'reviewed', '1'));
    expect(sim.task('lines')).toMatchObject({
      status: 'completed',
      output: [{ price: 2 }, { price: 8 }, { price: 4 }],
    });
    expect(sim.run.status).toBe('completed');
  });

  it('a step reads the frontier, not the map: 1,000 items cost about the same per completion', async () => {
    const items = Array.from({ length: 1000 }, (_, i) => i);
    const sim = new Sim(charge, { orders: items.map((id) => ({ id })) });
    await sim.send({ kind: 'run_started' });
    const perEvent: number[] = [];
    while (sim.run.status === 'running') {
      const queued = [...sim.tasks.values()].filter((t) => t.status === 'queued');
      for (const t of queued) {
        await sim.send(sim.complete('each.task', { amount: 1 }, t.iteration));
        perEvent.push(sim.loadsPerEvent.at(-1)!);
      }
    }
    expect(sim.task('total').output).toBe(1000);
    // Every completion but the last loads a handful of instances; the last collects the 1,000 outputs once.
    expect(Math.max(...perEvent.slice(0, -1))).toBeLessThanOrEqual(8);
    expect(perEvent.at(-1)).toBeGreaterThanOrEqual(1000);
  });
});

describe('bodies at scale and nested', () => {
  it('a map of 500 items whose body finishes at once completes in one decision', async () => {
    const wf = workflowOf(`
name: instant
nodes:
  - id: each
    kind: map
    items: input.items
    body:
      nodes:
        - { id: double, kind: transform, value: "item * 2" }
        - { id: check, kind: switch, expression: "nodes.double.output > 500" }
        - { id: big, kind: transform, value: "'big'" }
        - { id: small, kind: noop }
        - { id: merge, kind: noop }
      edges:
        - { from: double, to: check }
        - { from: check, to: big, case: true }
        - { from: check, to: small, default: true }
        - { from: big, to: merge }
        - { from: small, to: merge }
      output: nodes.double.output
`);
    const items = Array.from({ length: 500 }, (_, i) => i);
    const sim = new Sim(wf, { items });
    await sim.send({ kind: 'run_started' });
    expect(sim.run.status).toBe('completed');
    expect(sim.task('each').output).toEqual(items.map((i) => i * 2));
    expect(sim.task('big', '251').status).toBe('completed');
    expect(sim.task('big', '250').status).toBe('skipped');
  });

  it('a map inside a loop: iteration keys nest, and nodes read the pass and the item they are in', async () => {
    const wf = workflowOf(`
name: nested
nodes:
  - id: rounds
    kind: loop
    max_iterations: 3
    while: "index < 1"
    body:
      nodes:
        - { id: setup, kind: transform, value: "'round ' & index" }
        - id: each
          kind: map
          items: input.items
          body:
            nodes:
              - id: approve
                kind: wait_for_event
                event: ok
                correlation: "nodes.setup.output & '/' & item"
              - { id: work, task_type: t, input: { round: nodes.setup.output, item: item, got: nodes.approve.output } }
            edges:
              - { from: approve, to: work }
      edges:
        - { from: setup, to: each }
`);
    const sim = new Sim(wf, { items: ['a', 'b'] });
    await sim.send({ kind: 'run_started' });
    expect(sim.task('approve', '0/1').status).toBe('running');
    await sim.send(sim.signal('ok', 'B0', 'round 0/b'));
    expect(sim.queuedAt()).toEqual(['work[0/1]']);
    expect(sim.task('work', '0/1').input).toEqual({ round: 'round 0', item: 'b', got: 'B0' });
    await sim.send(sim.signal('ok', 'A0', 'round 0/a'));
    await sim.send(sim.complete('work', 1, '0/0'));
    await sim.send(sim.complete('work', 2, '0/1'));
    // Pass 1 starts: the same nodes, new keys.
    expect(sim.task('approve', '1/0').status).toBe('running');
    await sim.send(sim.signal('ok', 'A1', 'round 1/a'));
    await sim.send(sim.signal('ok', 'B1', 'round 1/b'));
    await sim.send(sim.complete('work', 3, '1/0'));
    await sim.send(sim.complete('work', 4, '1/1'));
    expect(sim.run.status).toBe('completed');
    expect(sim.task('rounds').output).toEqual([
      { each: [{ work: 1 }, { work: 2 }] },
      { each: [{ work: 3 }, { work: 4 }] },
    ]);
  });
});

describe('transform and terminate', () => {
  it('a transform computes its output and sets run variables read later', async () => {
    const wf = workflowOf(`
name: vars
nodes:
  - { id: calc, kind: transform, value: { total: "input.a + input.b" }, vars: { currency: "'EUR'" } }
  - { id: send, task_type: t, input: { total: nodes.calc.output.total, currency: vars.currency } }
edges:
  - { from: calc, to: send }
`);
    const sim = new Sim(wf, { a: 1, b: 2 });
    await sim.send({ kind: 'run_started' });
    expect(sim.task('send').input).toEqual({ total: 3, currency: 'EUR' });
    expect(sim.run.vars).toEqual({ currency: 'EUR' });
  });

  it('terminate ends the run at once, completed with an output or failed with a reason', async () => {
    const wf = workflowOf(`
name: gate
nodes:
  - { id: other, task_type: t }
  - { id: check, kind: switch, expression: input.ok }
  - { id: accept, kind: terminate, status: completed, output: { accepted: true } }
  - { id: reject, kind: terminate, status: failed, reason: "'rejected: ' & input.why" }
edges:
  - { from: check, to: accept, case: true }
  - { from: check, to: reject, case: false }
`);
    const yes = new Sim(wf, { ok: true });
    await yes.send({ kind: 'run_started' });
    expect(yes.run.status).toBe('completed');
    expect(yes.task('other').status).toBe('cancelled');
    expect(yes.history.at(-1)).toMatchObject({ type: 'run.completed', data: { output: { accepted: true } } });
    const no = new Sim(wf, { ok: false, why: 'no stock' });
    await no.send({ kind: 'run_started' });
    expect(no.run.status).toBe('failed');
    expect(no.history.at(-1)).toMatchObject({
      type: 'run.failed',
      data: { error: { message: 'rejected: no stock', node: 'reject', reason: 'terminated' } },
    });
  });
});
