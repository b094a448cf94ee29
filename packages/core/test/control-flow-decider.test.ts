import { describe, expect, it } from 'vitest';
import { Sim, workflowOf } from './sim.js';

const routed = workflowOf(`
name: routed
nodes:
  - { id: route, kind: switch, expression: input.tier }
  - { id: gold, task_type: t }
  - { id: gold_gift, task_type: t }
  - { id: silver, task_type: t }
  - { id: standard, task_type: t }
  - { id: done, task_type: t }
edges:
  - { from: route, to: [gold, gold_gift], case: gold }
  - { from: route, to: silver, case: [silver, 2] }
  - { from: route, to: standard, default: true }
  - { from: gold, to: done }
  - { from: gold_gift, to: done }
  - { from: silver, to: done }
  - { from: standard, to: done }
`);

describe('switch', () => {
  it('takes the matching case, skips the others, and the join after it still completes', async () => {
    const sim = new Sim(routed, { tier: 'gold' });
    await sim.send({ kind: 'run_started' });
    expect(sim.queued().sort()).toEqual(['gold', 'gold_gift']);
    expect(sim.task('silver').status).toBe('skipped');
    expect(sim.task('standard').status).toBe('skipped');
    expect(sim.task('route').output).toEqual({ value: 'gold', taken: ['gold', 'gold_gift'] });
    await sim.send(sim.complete('gold'));
    expect(sim.task('done').status).toBe('waiting');
    await sim.send(sim.complete('gold_gift'));
    expect(sim.task('done').status).toBe('queued');
    await sim.send(sim.complete('done', 'ok'));
    expect(sim.run.status).toBe('completed');
  });

  it('matches values as JSON (the number 2, not the text "2") and falls back to the default edge', async () => {
    const two = new Sim(routed, { tier: 2 });
    await two.send({ kind: 'run_started' });
    expect(two.queued()).toEqual(['silver']);
    const text = new Sim(routed, { tier: '2' });
    await text.send({ kind: 'run_started' });
    expect(text.queued()).toEqual(['standard']);
  });

  it('fails the run naming the value when nothing matches and there is no default', async () => {
    const wf = workflowOf(`
name: strict
nodes:
  - { id: route, kind: switch, expression: input.tier }
  - { id: a, task_type: t }
edges:
  - { from: route, to: a, case: gold }
`);
    const sim = new Sim(wf, { tier: 'bronze' });
    await sim.send({ kind: 'run_started' });
    expect(sim.run.status).toBe('failed');
    expect(sim.history.at(-1)).toMatchObject({
      type: 'run.failed',
      data: {
        error: {
          message:
            'node "route" failed: switch value "bronze" (the text "bronze") matches no case (cases: "gold") and there is no default edge',
        },
      },
    });
  });

  it('fails naming the path when the expression reads something missing', async () => {
    const sim = new Sim(routed, { level: 'gold' });
    await sim.send({ kind: 'run_started' });
    expect(sim.run.status).toBe('failed');
    expect(JSON.stringify(sim.history.at(-1))).toContain(
      'input.tier does not exist: input has no \\"tier\\"',
    );
  });
});

describe('join any', () => {
  it('starts on the first arrival and ignores the later ones', async () => {
    const wf = workflowOf(`
name: race
nodes:
  - { id: a, task_type: t }
  - { id: b, task_type: t }
  - { id: first, kind: noop, join: any }
  - { id: after, task_type: t }
edges:
  - { from: a, to: first }
  - { from: b, to: first }
  - { from: first, to: after }
`);
    const sim = new Sim(wf);
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('b'));
    expect(sim.task('first').status).toBe('completed');
    expect(sim.queued().sort()).toEqual(['a', 'after']);
    await sim.send(sim.complete('a'));
    expect(sim.count('join.ignored', 'first')).toBe(1);
    await sim.send(sim.complete('after'));
    expect(sim.run.status).toBe('completed');
    expect(sim.count('task.scheduled', 'after')).toBe(1);
  });
});

describe('wait', () => {
  it('waits for a duration with a timer, then goes on', async () => {
    const wf = workflowOf(`
name: w
nodes:
  - { id: pause, kind: wait, duration: 2d }
  - { id: next, task_type: t }
edges:
  - { from: pause, to: next }
`);
    const sim = new Sim(wf);
    await sim.send({ kind: 'run_started' });
    expect(sim.task('pause').status).toBe('running');
    expect(sim.timers[0]!.dueAt.getTime() - sim.now.getTime()).toBe(2 * 86_400_000);
    expect(sim.queued()).toEqual([]);
    await sim.fireNext();
    expect(sim.task('pause').status).toBe('completed');
    expect(sim.queued()).toEqual(['next']);
    // A timer delivered twice changes nothing the second time.
    await sim.send({ kind: 'timer_fired', purpose: sim.timers[0]!.purpose });
    expect(sim.count('timer.ignored')).toBe(1);
    expect(sim.count('task.scheduled', 'next')).toBe(1);
  });

  it('waits until a computed time; a time already past goes on at once; a bad value fails naming it', async () => {
    const wf = workflowOf(`
name: until
nodes:
  - { id: pause, kind: wait, until: input.at }
  - { id: next, task_type: t }
edges:
  - { from: pause, to: next }
`);
    const later = new Sim(wf, { at: '2026-01-01T00:10:00Z' });
    await later.send({ kind: 'run_started' });
    expect(later.timers[0]!.dueAt.toISOString()).toBe('2026-01-01T00:10:00.000Z');
    const past = new Sim(wf, { at: '2025-12-31T00:00:00Z' });
    await past.send({ kind: 'run_started' });
    expect(past.queued()).toEqual(['next']);
    const bad = new Sim(wf, { at: 'tomorrow' });
    await bad.send({ kind: 'run_started' });
    expect(bad.run.status).toBe('failed');
    expect(JSON.stringify(bad.history.at(-1))).toContain('until must give a time');
    expect(JSON.stringify(bad.history.at(-1))).toContain('not the text \\"tomorrow\\"');
  });
});

const approval = workflowOf(`
name: approval
nodes:
  - { id: prepare, task_type: t }
  - { id: approve, kind: wait_for_event, event: approved, timeout: 1h }
  - { id: ship, task_type: t, input: { by: nodes.approve.output.by } }
  - { id: escalate, task_type: t }
edges:
  - { from: prepare, to: approve }
  - { from: approve, to: ship }
  - { from: approve, to: escalate, on: timeout }
`);

describe('wait_for_event', () => {
  it('a signal to a waiting node completes it with the signal data and skips the timeout edge', async () => {
    const sim = new Sim(approval);
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('prepare'));
    expect(sim.task('approve').status).toBe('running');
    await sim.send(sim.signal('approved', { by: 'ann' }));
    expect(sim.task('approve')).toMatchObject({ status: 'completed', output: { by: 'ann' } });
    expect(sim.task('ship').input).toEqual({ by: 'ann' });
    expect(sim.task('escalate').status).toBe('skipped');
    // The timeout comes later and is ignored.
    await sim.fireNext();
    expect(sim.count('timer.ignored')).toBe(1);
    expect(sim.task('escalate').status).toBe('skipped');
  });

  it('a signal sent before the node is reached is kept and taken when it is', async () => {
    const sim = new Sim(approval);
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.signal('approved', { by: 'early' }));
    expect(sim.history.at(-1)).toMatchObject({ type: 'signal.received', data: { outcome: 'kept' } });
    await sim.send(sim.complete('prepare'));
    expect(sim.task('approve')).toMatchObject({ status: 'completed', output: { by: 'early' } });
    expect(sim.pendingTimers()).toEqual([]);
    expect(sim.queued()).toEqual(['ship']);
  });

  it('a timeout takes the timeout edge; a signal after it is kept, not delivered', async () => {
    const sim = new Sim(approval);
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('prepare'));
    await sim.fireNext();
    expect(sim.task('approve').output).toEqual({ timed_out: true });
    expect(sim.queued()).toEqual(['escalate']);
    expect(sim.task('ship').status).toBe('skipped');
    await sim.send(sim.signal('approved', { by: 'late' }));
    expect(sim.history.at(-1)).toMatchObject({ type: 'signal.received', data: { outcome: 'kept' } });
    expect(sim.task('ship').status).toBe('skipped');
  });

  it('a timeout with no timeout edge fails the node and the run', async () => {
    const wf = workflowOf(`
name: strict
nodes:
  - { id: approve, kind: wait_for_event, event: approved, timeout: 2d }
`);
    const sim = new Sim(wf);
    await sim.send({ kind: 'run_started' });
    await sim.fireNext();
    expect(sim.run.status).toBe('failed');
    expect(sim.history.at(-1)).toMatchObject({
      data: { error: { message: 'node "approve" failed: no signal "approved" arrived within 2d' } },
    });
  });

  it('with a correlation, takes only signals carrying the same key', async () => {
    const wf = workflowOf(`
name: corr
nodes:
  - { id: approve, kind: wait_for_event, event: approved, correlation: input.order }
`);
    const sim = new Sim(wf, { order: 42 });
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.signal('approved', 'other', '41'));
    await sim.send(sim.signal('approved', 'none'));
    expect(sim.task('approve').status).toBe('running');
    await sim.send(sim.signal('approved', 'mine', '42'));
    expect(sim.task('approve')).toMatchObject({ status: 'completed', output: 'mine' });
    expect(sim.run.status).toBe('completed');
  });
});
