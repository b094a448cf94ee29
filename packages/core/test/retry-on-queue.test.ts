import { describe, expect, it } from 'vitest';
import { Sim, workflowOf } from './sim.js';

// With a queue dispatcher of one's own, a retry's backoff is the dispatcher's delay (invariant 17): the next
// attempt is queued at once with a not-before time, instead of a timer that queues it later.

const wf = workflowOf(`
name: r
nodes:
  - id: a
    task_type: t
    input: { v: input.v }
    retry: { max_attempts: 3, backoff: exponential, delay: 2s, max_delay: 3s }
  - id: h
    kind: http
    url: "'https://example.test/x'"
    retry: { max_attempts: 2, delay: 1s }
`);

describe('retries on the queue', () => {
  it('queues the next attempt at once with the backoff as its delay, and arms no timer', async () => {
    const sim = new Sim(wf, { v: 1 });
    sim.decideOptions = { retryOnQueue: true };
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.fail('a', true));
    expect(sim.timers).toEqual([]);
    expect(sim.task('a')).toMatchObject({ attempt: 2, status: 'queued', input: { v: 1 } });
    const created = sim.actions.filter(
      (a) => a.kind === 'create_task' && a.nodeId === 'a' && a.attempt === 2,
    );
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ dispatch: { taskType: 't', delayMs: 2000 } });
    expect(sim.history.filter((h) => h.type === 'task.scheduled').at(-1)).toMatchObject({
      nodeId: 'a',
      attempt: 2,
      data: { retry: true, delay_ms: 2000 },
    });
    await sim.send(sim.fail('a', true));
    expect(sim.actions.filter((a) => a.kind === 'create_task' && a.attempt === 3).at(-1)).toMatchObject({
      dispatch: { delayMs: 3000 },
    });
  });

  it('keeps the timer for nodes the engine runs itself, and without the option', async () => {
    const sim = new Sim(wf, { v: 1 });
    sim.decideOptions = { retryOnQueue: true };
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.fail('h', true));
    expect(sim.timers).toHaveLength(1);
    const plain = new Sim(wf, { v: 1 });
    await plain.send({ kind: 'run_started' });
    await plain.send(plain.fail('a', true));
    expect(plain.timers).toHaveLength(1);
    expect(plain.task('a')).toMatchObject({ attempt: 1 });
  });
});
