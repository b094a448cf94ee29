import { Engine, type LeasedTask } from '@weft/engine';
import { armFault } from '@weft/engine/internal';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, failed } from '../helpers.js';

// Invariants 7, 9 and 10, for runs started by runs:
// - the child's outcome reaches the parent in the child's own transaction, so a parent is never woken
//   for a child whose completion rolled back;
// - child starts are deduplicated on a key that includes the parent attempt, so a retry starts a new child;
// - ending an attempt and starting its child are serialised, so a cancel never leaves an orphan child.
// Two engines, each with its own connections and background loops: real concurrent transactions.

const CHILD = `
name: kid
nodes:
  - { id: work, task_type: kid.work }
output: { got: nodes.work.output }
`;
const PARENT = `
name: dad
nodes:
  - { id: sub, kind: sub_workflow, definition: kid, input: { n: input.n }, retry: { max_attempts: 2, delay: 0s } }
`;

let db: TestDatabase;
let a: Engine;
let b: Engine;

function engine(): Engine {
  return new Engine({
    store: new PgStore(db.pool(5)),
    config: {
      decidePollMs: 30,
      timerPollMs: 30,
      leasePollMs: 50,
      relayPollMs: 30,
      relayBackoffMs: 50,
      crossProcessWakeups: true,
    },
  });
}

beforeAll(async () => {
  db = await createTestDatabase();
  a = engine();
  b = engine();
  await Promise.all([a.start(), b.start()]);
  await a.definitions.deploy('default', CHILD);
  await a.definitions.deploy('default', PARENT);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await db?.drop();
});

async function leaseOne(types: string[]): Promise<LeasedTask> {
  return eventually(
    async () =>
      (await a.tasks.poll({ namespace: 'default', worker: 'w', taskTypes: types, max: 1, waitMs: 50 }))[0],
    10_000,
    `a ${types.join(', ')} task`,
  );
}

async function status(runId: string, want: string) {
  return eventually(
    async () => {
      const r = await a.context.store.getRun(runId);
      return r?.status === want ? r : undefined;
    },
    10_000,
    `run ${runId} to be ${want}`,
  );
}

async function children(parentId: string) {
  return db.sql<{ id: string; status: string; parentAttempt: number }[]>`
    SELECT id, status, parent_attempt FROM weft.runs WHERE parent_run_id = ${parentId}::uuid ORDER BY parent_attempt`;
}

describe('child runs', () => {
  it('a child whose completion rolls back does not wake its parent', async () => {
    const parent = await a.runs.start({ namespace: 'default', definition: 'dad', input: { n: 1 } });
    const task = await leaseOne(['kid.work']);
    // The child's completing transaction writes everything, then fails before commit.
    const disarm = armFault('pass.after-write', () => {
      throw new Error('crash before commit');
    });
    await expect(
      a.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(task, 'done')] }),
    ).rejects.toThrow(/crash before commit/);
    disarm();
    // Give every loop of both engines time to act on anything that might have leaked.
    await new Promise((r) => setTimeout(r, 500));
    const [parentRun, childRun] = await Promise.all([a.runs.get(parent.id), a.runs.get(task.runId)]);
    expect(childRun.status).toBe('running');
    expect(parentRun.status).toBe('running');
    const inbox = await db.sql`SELECT event FROM weft.inbox WHERE run_id = ${parent.id}::uuid`;
    expect(inbox).toEqual([]);
    const wakes =
      await db.sql`SELECT 1 FROM weft.outbox WHERE kind = 'wake_run' AND payload->>'runId' = ${parent.id}`;
    expect(wakes).toEqual([]);
    const [sub] =
      await db.sql`SELECT status FROM weft.tasks WHERE run_id = ${parent.id}::uuid AND node_id = 'sub'`;
    expect(sub!.status).toBe('running');
    // The same report, now committing, completes the child and, through it, the parent.
    await a.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(task, 'done')] });
    const done = await status(parent.id, 'completed');
    expect(done.output).toEqual({ sub: { got: 'done' } });
  });

  it('a retried sub-workflow node starts a new child', async () => {
    const parent = await a.runs.start({ namespace: 'default', definition: 'dad', input: { n: 2 } });
    const first = await leaseOne(['kid.work']);
    await a.tasks.report({ namespace: 'default', worker: 'w', reports: [failed(first, 'boom', false)] });
    const second = await leaseOne(['kid.work']);
    expect(second.runId).not.toBe(first.runId);
    await a.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(second, 'second time')] });
    const done = await status(parent.id, 'completed');
    expect(done.output).toEqual({ sub: { got: 'second time' } });
    const kids = await children(parent.id);
    expect(kids.map((k) => [k.parentAttempt, k.status])).toEqual([
      [1, 'failed'],
      [2, 'completed'],
    ]);
  });

  it('a start delivered twice starts one child', async () => {
    const parent = await a.runs.start({ namespace: 'default', definition: 'dad', input: { n: 3 } });
    const task = await leaseOne(['kid.work']);
    // The same attempt's start again (as a replayed row would be), even under another run id: the start
    // key, not the id, is what makes it the same start.
    const payload = {
      kind: 'start_run',
      runId: '01900000-0000-7000-8000-00000000abcd',
      namespace: 'default',
      definition: 'kid',
      version: null,
      input: { n: 3 },
      parent: { runId: parent.id, nodeId: 'sub', iteration: '', attempt: 1 },
      detached: false,
    };
    await db.sql`INSERT INTO weft.outbox (run_id, namespace, destination, kind, message_id, payload)
                 VALUES (${parent.id}::uuid, 'default', 'weft.runs', 'start_run', 'dup', ${JSON.stringify(payload)}::text::jsonb)`;
    await eventually(async () => {
      const left = await db.sql`SELECT 1 FROM weft.outbox WHERE message_id = 'dup'`;
      return left.length === 0 ? true : undefined;
    });
    expect((await children(parent.id)).map((k) => k.id)).toEqual([task.runId]);
    await a.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(task, 'once')] });
    await status(parent.id, 'completed');
  });

  it('a cancel racing a child start leaves no orphan', async () => {
    // Hold the first child start right after it checked (and share-locked) the parent attempt.
    let reached!: () => void;
    const atCheck = new Promise<void>((r) => (reached = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let armed = true;
    const disarm = armFault('relay.after-parent-check', async () => {
      if (!armed) return;
      armed = false;
      reached();
      await gate;
    });
    try {
      const parent = await a.runs.start({ namespace: 'default', definition: 'dad', input: { n: 4 } });
      await atCheck;
      // The cancel runs on other connections while the start's transaction is open.
      let cancelled = false;
      const cancelling = b.runs.cancel(parent.id, 'tester', 'race').then(() => {
        cancelled = true;
      });
      await new Promise((r) => setTimeout(r, 300));
      const cancelledBeforeStartCommitted = cancelled;
      release();
      await cancelling;
      // No orphan: the child that was started is cancelled by the cascade.
      const kids = await eventually(
        async () => {
          const k = await children(parent.id);
          return k.length > 0 && k.every((c) => c.status === 'cancelled') ? k : undefined;
        },
        5_000,
        'the child to be cancelled',
      );
      expect(kids).toHaveLength(1);
      // Because the cancel waited for the start: ending the attempt and starting its child are serialised.
      expect(cancelledBeforeStartCommitted).toBe(false);
    } finally {
      release();
      disarm();
    }
  });

  it('many children ending while their parents decide: every parent completes', async () => {
    await a.definitions.deploy(
      'default',
      `name: fan-dad
nodes:
${[0, 1, 2, 3, 4].map((i) => `  - { id: s${i}, kind: sub_workflow, definition: kid, input: { i: ${i} } }`).join('\n')}
  - { id: join, kind: noop }
edges:
${[0, 1, 2, 3, 4].map((i) => `  - { from: s${i}, to: join }`).join('\n')}
`,
    );
    const parents = await Promise.all(
      Array.from({ length: 10 }, () =>
        a.runs.start({ namespace: 'default', definition: 'fan-dad', input: {} }),
      ),
    );
    let stop = false;
    const work = async (e: Engine, name: string) => {
      while (!stop) {
        const tasks = await e.tasks.poll({
          namespace: 'default',
          worker: name,
          taskTypes: ['kid.work'],
          max: 5,
          waitMs: 50,
        });
        if (tasks.length > 0)
          await e.tasks.report({
            namespace: 'default',
            worker: name,
            reports: tasks.map((t) => completed(t, 1)),
          });
      }
    };
    const workers = [work(a, 'wa'), work(b, 'wb')];
    try {
      for (const p of parents) await status(p.id, 'completed');
    } finally {
      stop = true;
      await Promise.all(workers);
    }
    const retried = [a, b].map((e) => (e.context.store as PgStore).retries);
    console.log('retried transactions', JSON.stringify(retried));
  });
});
