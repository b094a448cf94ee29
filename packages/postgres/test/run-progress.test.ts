import { Engine, type RunProgress } from '@weft/engine';
import { armFault } from '@weft/engine/internal';
import { connect, PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempBlobs } from './fleet.js';
import { completed, failed, lease } from './helpers.js';

// A run's progress (steps known, completed, failed, running) is counted from the history a pass appends, by
// the statement that appends it: in the transaction of the change it counts, and with no statement more on
// the report path. Statements are counted as the driver sends them.

let db: TestDatabase;
let engine: Engine;
let statements: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const sql = connect(db.url, { max: 4, onStatement: (q) => statements.push(q) });
  engine = new Engine({
    store: new PgStore(sql),
    blobs: tempBlobs(),
    config: { backgroundLoops: false, systemTasks: false },
  });
  await engine.start();
  // a, then b and c in parallel, then d; b is retried once; e is a human task after d.
  await engine.definitions.deploy(
    'default',
    `name: steps
nodes:
  - { id: a, task_type: p.a }
  - { id: b, task_type: p.b, retry: { max_attempts: 3, delay: 0s } }
  - { id: c, task_type: p.c }
  - { id: d, task_type: p.d }
  - { id: e, kind: human, title: Check }
edges:
  - { from: a, to: [b, c] }
  - { from: b, to: d }
  - { from: c, to: d }
  - { from: d, to: e }
`,
  );
});
afterAll(async () => {
  await engine?.stop();
  await db?.drop();
});

const progressOf = async (runId: string): Promise<RunProgress | undefined> =>
  (await engine.runs.get(runId)).progress;
const counts = (known: number, completed: number, failedCount: number, running: number) => ({
  known,
  completed,
  failed: failedCount,
  running,
});

async function report(types: string[], how: 'complete' | 'fail' = 'complete') {
  const tasks = await lease(engine, types);
  expect(tasks.length).toBeGreaterThan(0);
  await engine.tasks.report({
    namespace: 'default',
    worker: 'w',
    reports: tasks.map((t) => (how === 'complete' ? completed(t) : failed(t, 'flaky'))),
  });
}

describe('run progress', () => {
  it('counts steps known, completed, failed and running, each step once whatever its attempts', async () => {
    const run = await engine.runs.start({ namespace: 'default', definition: 'steps', input: {} });
    expect(await progressOf(run.id)).toEqual(counts(1, 0, 0, 1));
    await report(['p.a']);
    expect(await progressOf(run.id)).toEqual(counts(3, 1, 0, 2));
    await report(['p.b'], 'fail'); // retried at once: a second attempt of the same step
    expect(await progressOf(run.id)).toEqual(counts(3, 1, 0, 2));
    await report(['p.b', 'p.c']);
    expect(await progressOf(run.id)).toEqual(counts(4, 3, 0, 1));
    await report(['p.d']);
    expect(await progressOf(run.id)).toEqual(counts(5, 4, 0, 1));
    const [task] = await engine.inbox.list({ namespace: 'default', runId: run.id, limit: 10 } as never);
    await engine.inbox.complete('default', task!.taskId, 'ann', { ok: true });
    const done = await engine.runs.get(run.id);
    expect(done.status).toBe('completed');
    expect(done.progress).toEqual(counts(5, 5, 0, 0));
  });

  it('counts a step that fails for good, and nothing runs once the run has ended', async () => {
    const run = await engine.runs.start({ namespace: 'default', definition: 'steps', input: {} });
    await report(['p.a']);
    const [c] = await lease(engine, ['p.c']);
    await engine.tasks.report({ namespace: 'default', worker: 'w', reports: [failed(c!, 'broken', false)] });
    const ended = await engine.runs.get(run.id);
    expect(ended.status).toBe('failed');
    expect(ended.progress).toEqual(counts(3, 1, 1, 0));
  });

  it('changes with the report in its transaction: a report that rolls back counts nothing', async () => {
    const run = await engine.runs.start({ namespace: 'default', definition: 'steps', input: {} });
    const [a] = await lease(engine, ['p.a']);
    const disarm = armFault('pass.after-write', () => {
      throw new Error('injected rollback');
    });
    try {
      await expect(
        engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(a!)] }),
      ).rejects.toThrow('injected rollback');
    } finally {
      disarm();
    }
    expect(await progressOf(run.id)).toEqual(counts(1, 0, 0, 1));
    await engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(a!)] });
    expect(await progressOf(run.id)).toEqual(counts(3, 1, 0, 2));
  });

  it('a report and the decision it brings take as many statements as without progress counts', async () => {
    const run = await engine.runs.start({ namespace: 'default', definition: 'steps', input: {} });
    const [a] = await lease(engine, ['p.a']);
    statements = [];
    await engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(a!)] });
    const sent = statements;
    statements = [];
    expect(await progressOf(run.id)).toEqual(counts(3, 1, 0, 2));
    // The run's row is updated by one statement only, the one that appends the history it counts: the
    // report has no status change, so no other statement of it updates runs.
    const updatingRuns = sent.filter((q) => /UPDATE\s+weft\.runs/i.test(q));
    expect(updatingRuns).toHaveLength(1);
    expect(updatingRuns[0]).toMatch(/INSERT INTO weft\.history/);
    expect(sent.filter((q) => /INSERT INTO weft\.history/i.test(q))).toHaveLength(1);
  });
});
