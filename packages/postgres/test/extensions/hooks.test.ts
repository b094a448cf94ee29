import { isWeftError, type Json } from '@weft/core';
import type { StartRequest } from '@weft/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, type Harness, harness, lease } from '../helpers.js';

// Hooks of an embedding application: a before-start guard (a quota of its own) and the context a step's
// handler receives.

const ONE = 'name: hooked\nnodes:\n  - { id: a, task_type: hooked.work }\n';
const asked: StartRequest[] = [];
let h: Harness;

beforeAll(async () => {
  h = await harness(
    {},
    {
      hooks: {
        beforeStart: (request) => {
          asked.push(request);
          const amount = (request.input as { amount?: number } | null)?.amount ?? 0;
          return amount > 100
            ? { kind: 'refuse', code: 'over_budget', message: `amount ${amount} is over the budget of 100` }
            : { kind: 'allow' };
        },
        stepContext: (task) => ({ tenant: 'acme', node: task.nodeId, attempt: task.attempt }) satisfies Json,
      },
    },
  );
  await h.engine.definitions.deploy('default', ONE);
});
afterAll(async () => {
  await h?.close();
});

describe('hooks', () => {
  it('a before-start guard refuses a run and writes nothing', async () => {
    const error = await h.engine.runs
      .start({ namespace: 'default', definition: 'hooked', input: { amount: 500 } })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(isWeftError(error, 'start_refused')).toBe(true);
    expect(String((error as Error).message)).toContain('over_budget');
    expect(String((error as Error).message)).toContain('amount 500 is over the budget of 100');
    expect((error as { details?: unknown }).details).toEqual({ reason: 'over_budget' });
    const [counts] = await h.db.sql<{ runs: number; tasks: number; history: number }[]>`
      SELECT (SELECT count(*) FROM weft.runs)::int AS runs, (SELECT count(*) FROM weft.tasks)::int AS tasks,
             (SELECT count(*) FROM weft.history)::int AS history`;
    expect(counts).toEqual({ runs: 0, tasks: 0, history: 0 });
    expect(asked.at(-1)?.input).toEqual({ amount: 500 });

    const allowed = await h.engine.runs.start({
      namespace: 'default',
      definition: 'hooked',
      input: { amount: 5 },
    });
    expect(allowed.status).toBe('running');
  });

  it('gives each leased step the context the hook builds', async () => {
    const run = await h.engine.runs.start({
      namespace: 'default',
      definition: 'hooked',
      input: { amount: 1 },
    });
    const tasks = await lease(h.engine, ['hooked.work'], 10);
    const mine = tasks.find((t) => t.runId === run.id)!;
    expect(mine.context).toEqual({ tenant: 'acme', node: 'a', attempt: 1 });
    const out = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: tasks.map((t) => completed(t, null)),
    });
    expect(out.verdicts.every((v) => v.accepted)).toBe(true);
  });
});
