import { retryDelayMs } from '@weft/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Sim, workflowOf } from './sim.js';

const chain = workflowOf(`
name: chain
nodes:
  - { id: a, task_type: t }
  - { id: b, task_type: t, input: { x: nodes.a.output.n, y: input.y } }
  - { id: c, task_type: t }
edges:
  - { from: a, to: b }
  - { from: b, to: c }
`);

const diamond = workflowOf(`
name: diamond
nodes:
  - { id: a, task_type: t }
  - { id: b, task_type: t }
  - { id: c, task_type: t }
  - { id: d, task_type: t, input: { sum: "nodes.b.output + nodes.c.output" } }
edges:
  - { from: a, to: [b, c] }
  - { from: b, to: d }
  - { from: c, to: d }
`);

describe('decide', () => {
  it('runs a chain: each completion schedules the next node with its mapped input, then completes the run', async () => {
    const sim = new Sim(chain, { y: 'why' });
    await sim.send({ kind: 'run_started' });
    expect(sim.queued()).toEqual(['a']);
    await sim.send(sim.complete('a', { n: 7 }));
    expect(sim.queued()).toEqual(['b']);
    expect(sim.task('b').input).toEqual({ x: 7, y: 'why' });
    await sim.send(sim.complete('b', 'B'));
    expect(sim.task('c').input).toEqual({ y: 'why' });
    await sim.send(sim.complete('c', 'C'));
    expect(sim.run.status).toBe('completed');
    expect(sim.history.at(-1)).toEqual({ type: 'run.completed', data: { output: { c: 'C' } } });
    expect(sim.history.map((h) => h.type)).toEqual([
      'run.started',
      'task.scheduled',
      'task.completed',
      'task.scheduled',
      'task.completed',
      'task.scheduled',
      'task.completed',
      'run.completed',
    ]);
  });

  it('a join waits for every incoming branch', async () => {
    const sim = new Sim(diamond);
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('a'));
    expect(sim.queued().sort()).toEqual(['b', 'c']);
    await sim.send(sim.complete('c', 2));
    expect(sim.task('d').status).toBe('waiting');
    await sim.send(sim.complete('b', 3));
    expect(sim.task('d')).toMatchObject({ status: 'queued', input: { sum: 5 } });
  });

  it('starting twice changes nothing the second time', async () => {
    const sim = new Sim(chain);
    await sim.send({ kind: 'run_started' });
    expect(await sim.send({ kind: 'run_started' })).toEqual([]);
  });

  it('a retryable failure arms a timer with the backoff; the timer schedules the next attempt with the same input', async () => {
    const wf = workflowOf(`
name: r
nodes:
  - id: a
    task_type: t
    input: { v: input.v }
    retry: { max_attempts: 3, backoff: exponential, delay: 2s, max_delay: 3s }
`);
    const sim = new Sim(wf, { v: 1 });
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.fail('a', true));
    expect(sim.timers).toHaveLength(1);
    expect(sim.timers[0]!.dueAt.getTime() - sim.now.getTime()).toBe(2000);
    await sim.send({ kind: 'timer_fired', purpose: sim.timers[0]!.purpose });
    expect(sim.task('a')).toMatchObject({ attempt: 2, status: 'queued', input: { v: 1 } });
    await sim.send(sim.fail('a', true));
    expect(sim.timers[1]!.dueAt.getTime() - sim.now.getTime()).toBe(3000); // 4s capped at 3s
    await sim.send({ kind: 'timer_fired', purpose: sim.timers[1]!.purpose });
    await sim.send(sim.fail('a', true, 'still broken'));
    expect(sim.run.status).toBe('failed');
    expect(sim.history.at(-1)).toMatchObject({
      type: 'run.failed',
      data: { error: { message: 'node "a" failed after 3 attempts: still broken' } },
    });
  });

  it('a terminal failure fails the run and cancels the other branches', async () => {
    const sim = new Sim(diamond);
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('a'));
    await sim.send(sim.fail('b', false, 'card declined'));
    expect(sim.run.status).toBe('failed');
    expect(sim.task('c').status).toBe('cancelled');
    expect(sim.actions.some((a) => a.kind === 'cancel_open_work')).toBe(true);
  });

  it('ignores a report for an attempt that is not current', async () => {
    const wf = workflowOf(
      'name: x\nnodes:\n  - { id: a, task_type: t, retry: { max_attempts: 2, delay: 0s } }\n',
    );
    const sim = new Sim(wf);
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.fail('a', true));
    expect(sim.task('a').attempt).toBe(2); // delay 0: retried at once
    const stale = await sim.send({ kind: 'node_completed', nodeId: 'a', iteration: '', attempt: 1 });
    expect(stale).toEqual([]);
  });

  it('fails the node, naming the path, when an input reads something that does not exist', async () => {
    const sim = new Sim(chain, {});
    await sim.send({ kind: 'run_started' });
    await sim.send(sim.complete('a', { m: 1 }));
    expect(sim.run.status).toBe('failed');
    const failed = sim.history.find((h) => h.type === 'task.failed');
    expect((failed!.data as { error: { message: string } }).error.message).toBe(
      'input.x: nodes.a.output.n does not exist: nodes.a.output has no "n" (it has m)',
    );
  });

  it('cancelling stops everything and records who asked', async () => {
    const sim = new Sim(diamond);
    await sim.send({ kind: 'run_started' });
    await sim.send({ kind: 'run_cancelled', by: 'ops@example.com', reason: 'duplicate order' });
    expect(sim.run.status).toBe('cancelled');
    expect(sim.task('a').status).toBe('cancelled');
    expect(sim.history.at(-1)).toEqual({
      type: 'run.cancelled',
      data: { by: 'ops@example.com', reason: 'duplicate order' },
    });
    expect(await sim.send({ kind: 'run_cancelled', by: 'x' })).toEqual([]);
  });

  it('records refused reports', async () => {
    const sim = new Sim(chain);
    await sim.send({ kind: 'run_started' });
    await sim.send({
      kind: 'report_refused',
      nodeId: 'a',
      iteration: '',
      attempt: 1,
      report: 'complete',
      why: 'stale token',
      worker: 'w1',
    });
    expect(sim.history.at(-1)).toMatchObject({
      type: 'task.report_refused',
      nodeId: 'a',
      data: { why: 'stale token' },
    });
  });
});

describe('retryDelayMs', () => {
  it('grows exponentially up to the cap, or stays fixed', () => {
    const exp = {
      maxAttempts: 10,
      backoff: 'exponential' as const,
      delayMs: 100,
      maxDelayMs: 1000,
      factor: 3,
    };
    expect([1, 2, 3, 4].map((a) => retryDelayMs(exp, a))).toEqual([100, 300, 900, 1000]);
    expect(retryDelayMs({ ...exp, backoff: 'fixed' }, 5)).toBe(100);
  });
});

describe('fan-out and join, in any order (property)', () => {
  const width = 8;
  const fan = workflowOf(`
name: fan
nodes:
  - { id: start, task_type: t }
${Array.from({ length: width }, (_, i) => `  - { id: b${i}, task_type: t, retry: { max_attempts: 3, delay: 0s } }`).join('\n')}
  - { id: join, task_type: t }
  - { id: end, kind: noop }
edges:
  - { from: start, to: [${Array.from({ length: width }, (_, i) => `b${i}`).join(', ')}] }
${Array.from({ length: width }, (_, i) => `  - { from: b${i}, to: join }`).join('\n')}
  - { from: join, to: end }
`);

  it('any order of completions, retries and event batching reaches exactly one join and one completion', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(
          Array.from({ length: width }, (_, i) => i),
          { minLength: width, maxLength: width },
        ),
        fc.array(fc.boolean(), { minLength: width, maxLength: width }),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: width, maxLength: width }),
        async (order, failFirst, batchSizes) => {
          const sim = new Sim(fan);
          await sim.send({ kind: 'run_started' });
          await sim.send(sim.complete('start'));
          const pending = [...order];
          let batch = 0;
          while (pending.length > 0) {
            const size = batchSizes[batch++ % batchSizes.length]!;
            const events = [];
            for (const i of pending.splice(0, size)) {
              if (failFirst[i] && sim.task(`b${i}`).attempt === 1) {
                events.push(sim.fail(`b${i}`, true));
                pending.push(i);
              } else {
                events.push(sim.complete(`b${i}`, i));
              }
            }
            await sim.pass(events);
          }
          expect(sim.count('task.scheduled', 'join')).toBe(1);
          expect(sim.task('join').status).toBe('queued');
          await sim.send(sim.complete('join'));
          expect(sim.count('run.completed')).toBe(1);
          expect(sim.run.status).toBe('completed');
          // Evaluation cost: no decision loaded more than the frontier around its event.
          expect(sim.loads).toBeLessThan(width * 6 + 20);
        },
      ),
      { numRuns: 200 },
    );
  });
});
