import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, type Harness, harness, lease } from '../helpers.js';

// Invariants 13 and 14: a report lands only with the current attempt, the lease token, and a task that is
// still running. Refused reports are recorded in the run's history.

let h: Harness;
beforeAll(async () => {
  // Leases short enough for the expiry test to be quick, long enough that a loaded machine (the whole
  // suite in parallel on two cores) still reports within one before it expires.
  h = await harness({ leaseMs: 1500, leasePollMs: 50 });
});
afterAll(async () => {
  await h?.close();
});

async function history(runId: string) {
  return h.store.readHistory(runId, 0, 1000);
}

describe('lease fencing', () => {
  it('refuses a report carrying a token that is not the lease token, and records it', async () => {
    await h.engine.definitions.deploy('default', 'name: fence1\nnodes:\n  - { id: a, task_type: f1 }\n');
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'fence1', input: {} });
    const [task] = await lease(h.engine, ['f1']);
    const forged = { ...completed(task!, 'forged'), leaseToken: '00000000-0000-4000-8000-000000000000' };
    const { verdicts } = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'intruder',
      reports: [forged],
    });
    expect(verdicts[0]).toMatchObject({
      accepted: false,
      why: 'the lease token does not match: the lease was lost or taken over',
    });
    const refused = await eventually(async () =>
      (await history(run.id)).find((e) => e.type === 'task.report_refused'),
    );
    expect(refused).toMatchObject({
      nodeId: 'a',
      attempt: 1,
      data: { worker: 'intruder', report: 'complete' },
    });
    // The real holder still completes it.
    const ok = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(task!, 'real')],
    });
    expect(ok.verdicts[0]!.accepted).toBe(true);
    expect((await h.engine.runs.get(run.id)).output).toEqual({ a: 'real' });
  });

  it('refuses a late report from a worker whose lease expired and whose task was retried', async () => {
    await h.engine.definitions.deploy(
      'default',
      'name: fence2\nnodes:\n  - { id: a, task_type: f2, retry: { max_attempts: 3, delay: 0s } }\n',
    );
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'fence2', input: {} });
    const [slow] = await lease(h.engine, ['f2'], 1, 'slow-worker');
    // The slow worker stops heartbeating; its lease expires and attempt 2 goes to another worker.
    const second = await eventually(
      async () => (await lease(h.engine, ['f2'], 1, 'fast-worker'))[0],
      30_000,
      'attempt 2',
    );
    expect(second.attempt).toBe(2);
    const late = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'slow-worker',
      reports: [completed(slow!, 'late')],
    });
    expect(late.verdicts[0]).toMatchObject({
      accepted: false,
      why: 'the report is for attempt 1, but attempt 2 is current',
    });
    // The fast worker reports at once; a machine stalled past its 1.5 s lease too makes it expire like the
    // first, and a later attempt is reported instead (bounded by the three attempts).
    let current = second;
    for (;;) {
      const { verdicts } = await h.engine.tasks.report({
        namespace: 'default',
        worker: 'fast-worker',
        reports: [completed(current, 'on time')],
      });
      if (verdicts[0]!.accepted) break;
      current = await eventually(
        async () => (await lease(h.engine, ['f2'], 1, 'fast-worker'))[0],
        30_000,
        'another attempt',
      );
    }
    const done = await eventually(async () => {
      const r = await h.engine.runs.get(run.id);
      return r.status === 'completed' ? r : undefined;
    });
    expect(done.output).toEqual({ a: 'on time' });
    const events = await eventually(async () => {
      const e = await history(run.id);
      return e.some((x) => x.type === 'task.report_refused') ? e : undefined;
    });
    const failed = events.find((e) => e.type === 'task.failed');
    expect(failed).toMatchObject({ attempt: 1, data: { error: { reason: 'lease_expired' } } });
    expect(events.find((e) => e.type === 'task.report_refused')).toMatchObject({
      attempt: 1,
      data: { worker: 'slow-worker' },
    });
  });

  it('refuses a report after the attempt timed out, even with the right token and attempt', async () => {
    await h.engine.definitions.deploy(
      'default',
      'name: fence3\nnodes:\n  - { id: a, task_type: f3, timeout: 200ms, retry: { max_attempts: 1 } }\n',
    );
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'fence3', input: {} });
    const [task] = await lease(h.engine, ['f3']);
    const failed = await eventually(async () => {
      const r = await h.engine.runs.get(run.id);
      return r.status === 'failed' ? r : undefined;
    });
    expect(failed.error?.message).toMatch(/node "a" failed: timeout/);
    const [row] = await h.db
      .sql`SELECT status, lease_token::text AS token FROM weft.tasks WHERE run_id = ${run.id}::uuid`;
    expect(row).toMatchObject({ status: 'timed_out', token: task!.leaseToken });
    const late = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(task!, 'too late')],
    });
    expect(late.verdicts[0]).toMatchObject({ accepted: false, why: 'the task is already timed out' });
    const [after] = await h.db.sql`SELECT status, output FROM weft.tasks WHERE run_id = ${run.id}::uuid`;
    expect(after).toMatchObject({ status: 'timed_out', output: null });
  });

  it('refuses a report past the attempt deadline before the reaper has run', async () => {
    const slow = await harness({ leasePollMs: 60_000 });
    try {
      await slow.engine.definitions.deploy(
        'default',
        'name: fence4\nnodes:\n  - { id: a, task_type: f4, timeout: 100ms }\n',
      );
      await slow.engine.runs.start({ namespace: 'default', definition: 'fence4', input: {} });
      const [task] = await lease(slow.engine, ['f4']);
      await new Promise((r) => setTimeout(r, 200));
      const late = await slow.engine.tasks.report({
        namespace: 'default',
        worker: 'w',
        reports: [completed(task!, 'late')],
      });
      expect(late.verdicts[0]).toMatchObject({ accepted: false, why: "the attempt's timeout has passed" });
    } finally {
      await slow.close();
    }
  });
});
