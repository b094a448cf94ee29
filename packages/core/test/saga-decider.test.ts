import { checkOperatorRequest, parseDefinition, type RunEvent } from '@weft/core';
import { describe, expect, it } from 'vitest';
import { Sim, workflowOf } from './sim.js';

const chain = workflowOf(`
name: booking
nodes:
  - id: flight
    task_type: flights.book
    compensate: { task_type: flights.cancel, input: { booking: nodes.flight.output.ref, who: input.who } }
  - id: hotel
    task_type: hotels.book
    compensate: { task_type: hotels.cancel }
  - { id: pay, task_type: payments.charge, retry: { max_attempts: 1 } }
edges:
  - { from: flight, to: hotel }
  - { from: hotel, to: pay }
`);

const fork = workflowOf(`
name: fork
nodes:
  - { id: start, task_type: t }
  - { id: b, task_type: t, compensate: { task_type: undo.b } }
  - { id: c, task_type: t, compensate: { task_type: undo.c } }
  - { id: d, task_type: t, retry: { max_attempts: 1 } }
  - { id: join, task_type: t }
edges:
  - { from: start, to: [b, c, d] }
  - { from: b, to: join }
  - { from: c, to: join }
  - { from: d, to: join }
`);

/** Decides whatever the run left in its inbox (the `compensation_due` event), like the next pass would. */
async function drain(sim: Sim, before: RunEvent[] = []): Promise<void> {
  const events = [...before, ...sim.inbox.splice(0)];
  await sim.pass(events);
}

describe('saga compensation', () => {
  it('runs the compensations of completed steps in reverse order, one at a time, then fails the run', async () => {
    const sim = new Sim(chain, { who: 'ada' });
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('flight', { ref: 'F1' }));
    await sim.send(sim.complete('hotel', { room: 12 }));
    await sim.send(sim.fail('pay', true, 'card declined'));
    expect(sim.run.status).toBe('compensating');
    expect(sim.history.find((h) => h.type === 'run.compensating')?.data).toMatchObject({
      steps: ['hotel', 'flight'],
    });
    expect(sim.inbox).toEqual([{ kind: 'compensation_due' }]);
    expect(sim.requested).toBe(1);
    await drain(sim);
    // One at a time: only the hotel's compensation, with the hotel's output as its default input.
    expect(sim.queued()).toEqual(['hotel.compensate']);
    expect(sim.task('hotel.compensate').input).toEqual({ room: 12 });
    await sim.send(sim.complete('hotel.compensate', 'cancelled'));
    expect(sim.queued()).toEqual(['flight.compensate']);
    expect(sim.task('flight.compensate').input).toEqual({ booking: 'F1', who: 'ada' });
    expect(sim.run.status).toBe('compensating');
    const last = await sim.send(sim.complete('flight.compensate', 'cancelled'));
    expect(sim.run.status).toBe('failed');
    const finish = last.find((a) => a.kind === 'finish_run');
    expect(finish).toMatchObject({
      status: 'failed',
      error: {
        node: 'pay',
        reason: 'error',
        compensation: { status: 'completed', compensated: ['hotel', 'flight'] },
      },
    });
    expect(sim.history.map((h) => h.type).slice(-2)).toEqual(['run.compensated', 'run.failed']);
  });

  it('orders compensations by when completions were decided, not by graph order', async () => {
    const sim = new Sim(fork);
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('start'));
    await sim.send(sim.complete('c', 'C'));
    await sim.send(sim.complete('b', 'B'));
    await sim.send(sim.fail('d', false));
    await drain(sim);
    expect(sim.queued()).toEqual(['b.compensate']);
    await sim.send(sim.complete('b.compensate'));
    expect(sim.queued()).toEqual(['c.compensate']);
  });

  it('compensates a step whose completion committed before the failure but is decided after it', async () => {
    const sim = new Sim(fork);
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('start'));
    await sim.send(sim.complete('c', 'C'));
    // b's worker report lands (its row is completed) while d's failure is being decided.
    const late = sim.complete('b', 'B');
    await sim.send(sim.fail('d', false));
    expect(sim.task('b').status).toBe('completed');
    // The late completion is in the inbox ahead of the compensation_due event.
    await drain(sim, [late]);
    expect(sim.queued()).toEqual(['b.compensate']);
    await sim.send(sim.complete('b.compensate'));
    expect(sim.queued()).toEqual(['c.compensate']);
    await sim.send(sim.complete('c.compensate'));
    expect(sim.run.status).toBe('failed');
  });

  it('retries a failing compensation by its policy, then ends the run failed with compensation_failed', async () => {
    const wf = workflowOf(`
name: retrying
nodes:
  - { id: a, task_type: t, compensate: { task_type: undo.a } }
  - id: b
    task_type: t
    compensate: { task_type: undo.b, retry: { max_attempts: 2, backoff: fixed, delay: 1s } }
  - { id: c, task_type: t, retry: { max_attempts: 1 } }
edges:
  - { from: a, to: b }
  - { from: b, to: c }
`);
    const sim = new Sim(wf);
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('a'));
    await sim.send(sim.complete('b'));
    await sim.send(sim.fail('c', false, 'boom'));
    await drain(sim);
    await sim.send(sim.fail('b.compensate', true, 'refund api down'));
    expect(sim.pendingTimers()).toHaveLength(1);
    expect(sim.queued()).toEqual([]);
    await sim.fireNext();
    expect(sim.task('b.compensate').attempt).toBe(2);
    const last = await sim.send(sim.fail('b.compensate', true, 'refund api down'));
    expect(sim.run.status).toBe('failed');
    expect(last.find((a) => a.kind === 'finish_run')).toMatchObject({
      error: {
        reason: 'compensation_failed',
        node: 'c',
        compensation: { status: 'failed', failed: 'b', compensated: [], pending: ['a'] },
      },
    });
    // The rest is not compensated after a compensation failed for good.
    expect(sim.tasks.has('a.compensate\u0000')).toBe(false);
    expect(sim.count('run.compensation_failed')).toBe(1);
  });

  it('fails a run with nothing to compensate after one extra decision', async () => {
    const sim = new Sim(chain, { who: 'ada' });
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.fail('flight', false));
    expect(sim.run.status).toBe('compensating');
    await drain(sim);
    expect(sim.run.status).toBe('failed');
    expect(sim.actions.find((a) => a.kind === 'finish_run')).toMatchObject({
      error: { node: 'flight', compensation: { status: 'completed', compensated: [] } },
    });
  });

  it('leaves workflows without compensations as they were: a failure fails the run in the same decision', async () => {
    const plain = workflowOf(`
name: plain
nodes: [{ id: a, task_type: t, retry: { max_attempts: 1 } }]
`);
    expect(plain.compensable).toBe(false);
    const sim = new Sim(plain);
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.fail('a', true));
    expect(sim.run.status).toBe('failed');
    expect(sim.inbox).toEqual([]);
  });

  it('can be cancelled while compensating, and a compensated run cannot be retried', async () => {
    const sim = new Sim(chain, { who: 'ada' });
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('flight', { ref: 'F1' }));
    await sim.send(sim.fail('hotel', false));
    await drain(sim);
    expect(sim.queued()).toEqual(['flight.compensate']);
    const cancel = checkOperatorRequest(chain, sim.run, [], { kind: 'cancel', by: 'op' });
    expect(cancel.ok).toBe(true);
    if (cancel.ok) await sim.send(cancel.value);
    expect(sim.run.status).toBe('cancelled');
    expect(sim.task('flight.compensate').status).toBe('cancelled');
    const retry = checkOperatorRequest(chain, sim.run, [...sim.tasks.values()], { kind: 'retry', by: 'op' });
    expect(retry).toMatchObject({ ok: false, error: { code: 'run_compensated' } });
  });
});

describe('compensate in YAML', () => {
  it('parses the compensation with its own retry and timeout, and checks what its input reads', () => {
    const ok = parseDefinition(`
name: x
nodes:
  - id: a
    task_type: t
    compensate: { task_type: undo, input: { id: nodes.a.output.id }, timeout: 5s, retry: { max_attempts: 5 } }
`);
    expect(ok.ok).toBe(true);
    if (ok.ok && ok.value.nodes[0]?.kind === 'task')
      expect(ok.value.nodes[0].compensate).toMatchObject({
        taskType: 'undo',
        timeoutMs: 5000,
        retry: { maxAttempts: 5 },
      });
    const bad = parseDefinition(`
name: x
nodes:
  - { id: a, task_type: t, compensate: { task_type: undo, input: { id: nodes.b.output.id }, color: red } }
  - { id: b, task_type: t }
edges: [{ from: a, to: b }]
`);
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      const messages = bad.error.map((p) => p.message).join('\n');
      expect(messages).toContain('unknown field "color"');
      expect(messages).toContain('compensate.input reads nodes.b');
    }
  });
});

describe('retrying a run of a workflow with compensations', () => {
  it('is allowed when nothing was compensated, and a later failure compensates what completed', async () => {
    const sim = new Sim(chain, { who: 'ada' });
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.fail('flight', false));
    await drain(sim);
    expect(sim.run.status).toBe('failed');
    const check = checkOperatorRequest(chain, sim.run, [...sim.tasks.values()], { kind: 'retry', by: 'op' });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    await sim.send(check.value);
    expect(sim.run.status).toBe('running');
    expect(sim.queued()).toEqual(['flight']);
    await sim.send(sim.complete('flight', { ref: 'F2' }));
    await sim.send(sim.fail('hotel', false));
    expect(sim.run.status).toBe('compensating');
    await drain(sim);
    expect(sim.queued()).toEqual(['flight.compensate']);
    expect(sim.task('flight.compensate').input).toEqual({ booking: 'F2', who: 'ada' });
  });
});

describe('compensation inside a map', () => {
  it('undoes each completed item, last completed first, with an input read at the item', async () => {
    const wf = workflowOf(`
name: charges
nodes:
  - id: each
    kind: map
    items: input.orders
    body:
      nodes:
        - id: pay
          task_type: charge
          input: { order: item.id }
          compensate: { task_type: refund, input: { order: item.id, paid: nodes.pay.output.paid } }
  - { id: ship, task_type: ship, retry: { max_attempts: 1 } }
edges:
  - { from: each, to: ship }
`);
    const sim = new Sim(wf, { orders: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] });
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('pay', { paid: 2 }, '1'));
    await sim.send(sim.complete('pay', { paid: 3 }, '2'));
    await sim.send(sim.complete('pay', { paid: 1 }, '0'));
    await sim.send(sim.fail('ship', false));
    await drain(sim);
    const undone: unknown[] = [];
    for (const iteration of ['0', '2', '1']) {
      expect(sim.queuedAt()).toEqual([`pay.compensate[${iteration}]`]);
      undone.push(sim.task('pay.compensate', iteration).input);
      await sim.send(sim.complete('pay.compensate', null, iteration));
    }
    expect(undone).toEqual([
      { order: 'a', paid: 1 },
      { order: 'c', paid: 3 },
      { order: 'b', paid: 2 },
    ]);
    expect(sim.run.status).toBe('failed');
    expect(sim.actions.filter((a) => a.kind === 'finish_run').at(-1)).toMatchObject({
      error: { compensation: { compensated: ['pay[0]', 'pay[2]', 'pay[1]'] } },
    });
  });
});
