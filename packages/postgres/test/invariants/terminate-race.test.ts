import { Engine } from '@weft/engine';
import { armFault } from '@weft/engine/internal';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed } from '../helpers.js';

// Invariant 1: operator actions take the run's row lock, like every decision, so an operator's terminate and
// a worker's completion are strictly ordered. Without it the completion's decision inserts the next task
// while the terminate cancels "every open task" from a snapshot that cannot see it, and a task is left
// running against a terminated run.

const CHAIN = `
name: race
nodes:
  - { id: a, task_type: race.step }
  - { id: b, task_type: race.step }
  - { id: c, task_type: race.step }
edges:
  - { from: a, to: b }
  - { from: b, to: c }
`;

let db: TestDatabase;
let reporter: Engine;
let operator: Engine;

beforeAll(async () => {
  db = await createTestDatabase();
  // Two engines, each on its own connections: the report and the terminate are separate transactions.
  reporter = new Engine({
    store: new PgStore(db.pool(4)),
    config: { decidePollMs: 20, crossProcessWakeups: false },
  });
  operator = new Engine({
    store: new PgStore(db.pool(4)),
    config: { backgroundLoops: false, crossProcessWakeups: false },
  });
  await reporter.start();
  await operator.start();
  await reporter.definitions.deploy('default', CHAIN);
});
afterAll(async () => {
  await reporter?.stop();
  await operator?.stop();
  await db?.drop();
});

describe('terminate racing a completion', () => {
  it('never leaves a task queued or running against a terminated run, and refuses the late reports', async () => {
    const orders = new Set<string>();
    for (let round = 0; round < 12; round++) {
      const run = await reporter.runs.start({ namespace: 'default', definition: 'race', input: {} });
      const [a] = await reporter.tasks.poll({
        namespace: 'default',
        worker: 'w',
        taskTypes: ['race.step'],
        max: 1,
        waitMs: 0,
      });
      // A third of the rounds hold the report's transaction open after it finished the task, so the
      // terminate arrives while the completion's decision is under way; a third hold the terminate's
      // transaction open, so the report arrives while the terminate is under way; a third start both.
      const mode = round % 3;
      const hold = (name: string) => armFault(name, () => new Promise((r) => setTimeout(r, 60)));
      const disarm =
        mode === 0 ? hold('report.after-finish') : mode === 1 ? hold('control.after-claim') : () => {};
      try {
        const reporting = () =>
          reporter.tasks.report({
            namespace: 'default',
            worker: 'w',
            reports: [completed(a!, 'A')],
            // Ask for the next task in the same answer: it is inserted already running for this worker.
            next: { taskTypes: ['race.step'], max: 1 },
          });
        const terminate = () => operator.control.terminate(run.id, { by: 'ops', reason: `race ${round}` });
        const later = <T>(fn: () => Promise<T>) => new Promise((r) => setTimeout(r, 20)).then(fn);
        const [report, terminated] =
          mode === 0
            ? await Promise.all([reporting(), later(terminate)])
            : mode === 1
              ? await Promise.all([later(reporting), terminate()])
              : await Promise.all([reporting(), terminate()]);
        expect(terminated.status).toBe('terminated');
        orders.add(report.verdicts[0]!.accepted ? 'completion first' : 'terminate first');

        const open = await db.sql<{ node_id: string; status: string }[]>`
          SELECT node_id, status FROM weft.tasks
           WHERE run_id = ${run.id}::uuid AND status IN ('waiting', 'queued', 'running')`;
        expect(open).toEqual([]);

        // Whatever the worker was handed is dead: its heartbeat is lost and its report refused, on record.
        for (const b of report.leased) {
          const beat = await reporter.tasks.heartbeat('default', 'w', [
            { runId: b.runId, taskId: b.id, attempt: b.attempt, leaseToken: b.leaseToken },
          ]);
          expect(beat.lost).toEqual([b.id]);
          const late = await reporter.tasks.report({
            namespace: 'default',
            worker: 'w',
            reports: [completed(b, 'B')],
          });
          expect(late.verdicts[0]).toMatchObject({ accepted: false, why: 'the task is already cancelled' });
        }
        if (!report.verdicts[0]!.accepted) {
          expect(report.verdicts[0]).toMatchObject({ why: 'the task is already cancelled' });
        }
        const leasable = await reporter.tasks.poll({
          namespace: 'default',
          worker: 'w2',
          taskTypes: ['race.step'],
          max: 5,
          waitMs: 0,
        });
        expect(leasable).toEqual([]);

        const history = await reporter.context.store.readHistory(run.id, 0, 1000);
        expect(history.map((e) => e.seq)).toEqual(history.map((_, i) => i + 1));
        expect(history.filter((e) => e.type === 'run.terminated')).toHaveLength(1);
      } finally {
        disarm();
      }
    }
    expect([...orders].sort()).toEqual(['completion first', 'terminate first']);
  });
});
