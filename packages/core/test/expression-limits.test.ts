import { compileExpression } from '@weft/core';
import { describe, expect, it } from 'vitest';
import { Sim, workflowOf } from './sim.js';

// No clock and no chance decide anything (invariant 21): an expression reads the decision's time, never
// the machine's, may not draw a random number, and is stopped by a count of steps, not by a timeout.

const stamped = workflowOf(`
name: stamped
nodes:
  - { id: a, task_type: t, input: { at: "$now()", ms: "$millis()" } }
  - { id: b, task_type: t, input: { pick: "$random()" } }
edges:
  - { from: a, to: b }
`);

describe('expressions in decisions', () => {
  it("gives $now() and $millis() the decision's time and refuses $random()", async () => {
    const sim = new Sim(stamped);
    sim.now = new Date('2031-05-06T07:08:09.010Z');
    await sim.send({ kind: 'run_started' });
    expect(sim.task('a').input).toEqual({
      at: '2031-05-06T07:08:09.010Z',
      ms: Date.parse('2031-05-06T07:08:09.010Z'),
    });
    sim.now = new Date('2031-05-06T08:00:00Z');
    await sim.send(sim.complete('a', {}));
    expect(sim.task('b').status).toBe('failed');
    expect(sim.run.status).toBe('failed');
    const failed = sim.history.find((h) => h.type === 'task.failed' && h.nodeId === 'b');
    expect(JSON.stringify(failed?.data)).toMatch(/\$random\(\) is not allowed: decisions must be repeatable/);
  });

  it('stops an expression by its count of steps, the same on every machine', async () => {
    const compiled = compileExpression('$sum([1..5000].($ * 2))');
    if (!compiled.ok) throw new Error(compiled.error.message);
    const scope = { input: {}, nodes: {}, vars: {}, run: {} };
    const now = new Date('2031-01-01T00:00:00Z');
    // Under a small budget it fails, every time, saying so; under the default one it finishes.
    for (let i = 0; i < 3; i++) {
      const stopped = await compiled.value.evaluate(scope, now, { maxSteps: 1000 });
      expect(stopped).toEqual({
        ok: false,
        error: { message: 'expression took more than 1000 evaluation steps' },
      });
    }
    expect(await compiled.value.evaluate(scope, now)).toEqual({ ok: true, value: 25_005_000 });
  });
});
