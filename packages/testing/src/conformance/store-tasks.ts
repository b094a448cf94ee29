import { RUNS_DESTINATION, TASKS_DESTINATION } from '@weft/engine';
import { describe, expect, it } from 'vitest';
import {
  deploy,
  type Fixture,
  freshNamespace,
  insertRun,
  lease,
  leaseRequest,
  queueTask,
  writes,
} from './store-fixtures.js';

/** What decisions read and write about tasks: latest attempts, guarded updates, cancelling, stuck runs. */
export function taskTests(fixture: () => Fixture): void {
  async function setup() {
    const { store } = fixture();
    const ns = freshNamespace();
    const def = await deploy(store, ns);
    const runId = await insertRun(store, def);
    return { store, ns, runId };
  }
  const lockAndWrite = (f: Fixture, runId: string, parts: Parameters<typeof writes>[0]) =>
    f.store.transaction(async (tx) => {
      await tx.lockRuns([runId], 'wait');
      return tx.write(writes(parts));
    });

  describe('tasks', () => {
    it('loads the latest attempt of each node instance', async () => {
      const { store, ns, runId } = await setup();
      await queueTask(store, runId, ns, { nodeId: 'a', attempt: 1 });
      const second = await queueTask(store, runId, ns, { nodeId: 'a', attempt: 2 });
      const other = await queueTask(store, runId, ns, { nodeId: 'b' });
      const loaded = await store.transaction((tx) =>
        tx.loadTasks([
          { runId, nodeId: 'a', iteration: '' },
          { runId, nodeId: 'missing', iteration: '' },
        ]),
      );
      expect(loaded).toEqual([
        {
          id: second.taskId,
          runId,
          nodeId: 'a',
          iteration: '',
          attempt: 2,
          status: 'queued',
          input: { node: 'a' },
          output: null,
          error: null,
          arrivals: [],
        },
      ]);
      const all = await store.transaction((tx) => tx.loadRunTasks([runId]));
      expect(all.map((t) => [t.nodeId, t.attempt, t.id])).toEqual([
        ['a', 2, second.taskId],
        ['b', 1, other.taskId],
      ]);
      const locked = await store.transaction((tx) => tx.lockTasks([{ runId, nodeId: 'b', iteration: '' }]));
      expect(locked.map((t) => t.id)).toEqual([other.taskId]);
      expect((await store.listTasks(runId)).map((t) => [t.nodeId, t.attempt])).toEqual([
        ['a', 1],
        ['a', 2],
        ['b', 1],
      ]);
    });

    it('changes an attempt only while it is in the expected status', async () => {
      const { store, ns, runId } = await setup();
      await queueTask(store, runId, ns);
      const update = (expect: 'queued' | 'waiting') => ({
        runId,
        nodeId: 'a',
        iteration: '',
        attempt: 1,
        expect,
        status: 'skipped' as const,
        output: 'changed',
      });
      await lockAndWrite(fixture(), runId, { taskUpdates: [update('waiting')] });
      expect((await store.listTasks(runId))[0]).toMatchObject({ status: 'queued', output: null });
      await lockAndWrite(fixture(), runId, { taskUpdates: [update('queued')] });
      expect((await store.listTasks(runId))[0]).toMatchObject({ status: 'skipped', output: 'changed' });
      expect((await store.listTasks(runId))[0]!.finishedAt).toBeInstanceOf(Date);
    });

    it('stopping a run cancels its open attempts, drops its timers and mailboxes, and stops its children', async () => {
      const { store, ns, runId } = await setup();
      const child = await insertRun(store, await deploy(store, ns));
      await queueTask(store, runId, ns, { nodeId: 'open' });
      await lockAndWrite(fixture(), runId, {
        newTasks: [
          {
            id: '00000000-0000-4000-8000-0000000000c1',
            runId,
            namespace: ns,
            nodeId: 'sub',
            iteration: '',
            attempt: 1,
            status: 'running',
            taskType: null,
            priority: 0,
            timeoutMs: null,
            input: null,
            output: null,
            error: null,
            arrivals: [],
            lease: null,
            childRunId: child,
          },
        ],
        timers: [
          {
            id: '00000000-0000-4000-8000-0000000000c2',
            runId,
            dueAt: new Date(0),
            purpose: { kind: 'wait', nodeId: 'w', iteration: '', attempt: 1 },
          },
        ],
        mailboxes: [
          {
            runId,
            mailbox: {
              name: 'go',
              correlation: '',
              buffered: [],
              waiters: [{ nodeId: 'w', iteration: '', attempt: 1 }],
            },
          },
        ],
      });
      await lockAndWrite(fixture(), runId, {
        stopChildren: [{ runId, reason: 'stopped', mode: 'terminate' }],
        cancelOpenWork: [{ runId, reason: 'stopped', mode: 'terminate' }],
      });
      expect((await store.listTasks(runId)).map((t) => t.status)).toEqual(['cancelled', 'cancelled']);
      expect((await store.dueTimers(100_000)).filter((t) => t.runId === runId)).toEqual([]);
      expect(
        await store.transaction((tx) => tx.loadMailboxes([{ runId, name: 'go', correlation: '' }])),
      ).toEqual([]);
      const effects = await store.transaction((tx) => tx.claimOutbox(RUNS_DESTINATION, 1000));
      expect(effects.filter((e) => e.runId === runId).map((e) => e.payload)).toEqual([
        { kind: 'cancel_run', runId: child, by: `parent run ${runId}`, reason: 'stopped', mode: 'terminate' },
      ]);
      expect(await lease(store, leaseRequest(ns))).toEqual([]);
    });

    it('does not lease a task of a paused run', async () => {
      const { store, ns, runId } = await setup();
      await queueTask(store, runId, ns);
      await lockAndWrite(fixture(), runId, { runUpdates: [{ runId, status: 'paused' }] });
      expect(await lease(store, leaseRequest(ns))).toEqual([]);
      expect((await store.listTasks(runId))[0]?.status).toBe('queued');
    });

    it('says which attempts are still queued, and the best queued priority per type', async () => {
      const { store, ns, runId } = await setup();
      const a = await queueTask(store, runId, ns, { nodeId: 'a', priority: 3 });
      const b = await queueTask(store, runId, ns, { nodeId: 'b', priority: 7, taskType: 'other' });
      const priorities = await store.transaction((tx) => tx.queuedPriorities(ns, ['work', 'other', 'none']));
      expect(Object.fromEntries(priorities)).toEqual({ work: 3, other: 7 });
      await lease(store, leaseRequest(ns));
      const still = await store.transaction((tx) =>
        tx.queuedTasks([
          { runId, taskId: a.taskId, attempt: 1 },
          { runId, taskId: b.taskId, attempt: 1 },
          { runId, taskId: b.taskId, attempt: 2 },
        ]),
      );
      expect(still).toEqual([{ runId, taskId: b.taskId, attempt: 1 }]);
    });

    it('moves a task of a type capped since it was announced to the table, once, instead of leasing it by id', async () => {
      const { store, ns, runId } = await setup();
      const task = await queueTask(store, runId, ns, { copies: 0 });
      await store.transaction((tx) =>
        tx.setLimits([{ namespace: ns, kind: 'concurrency', name: 'work', max: 1, windowMs: null }]),
      );
      await lockAndWrite(fixture(), runId, {
        outbox: [
          {
            runId,
            namespace: ns,
            taskId: task.taskId,
            destination: TASKS_DESTINATION,
            messageId: `task:${task.taskId}`,
            payload: {
              kind: 'task_message',
              taskId: task.taskId,
              runId,
              attempt: 1,
              namespace: ns,
              taskType: 'work',
              priority: 0,
            },
          },
        ],
      });
      const named = [{ runId, taskId: task.taskId, attempt: 1 }];
      // Several messages naming it arrive at once: the task is moved once.
      const peers = await fixture().peers(4);
      const outcomes = await Promise.all(
        peers.map((peer) =>
          peer.transaction(async (tx) => {
            const out = await tx.leaseTasksById(leaseRequest(ns), named);
            await new Promise((r) => setTimeout(r, 40));
            return out;
          }),
        ),
      );
      expect(outcomes.flatMap((o) => o.tasks)).toEqual([]);
      expect(outcomes.flatMap((o) => o.moved)).toEqual([{ namespace: ns, taskType: 'work' }]);
      const again = await store.transaction((tx) => tx.leaseTasksById(leaseRequest(ns), named));
      expect(again).toEqual({ tasks: [], moved: [] });
      const messages = await store.transaction((tx) => tx.claimOutbox(TASKS_DESTINATION, 1000));
      expect(messages.filter((m) => m.runId === runId)).toEqual([]);
      expect((await lease(store, leaseRequest(ns))).map((t) => t.id)).toEqual([task.taskId]);
    });

    it('finds a running run with nothing that can wake it, and not one with a queued task', async () => {
      const { store, ns, runId } = await setup();
      const busy = await insertRun(store, await deploy(store, ns));
      await queueTask(store, busy, ns);
      await new Promise((r) => setTimeout(r, 30));
      const stuck = await store.stuckRuns(10, 100_000);
      expect(stuck).toContain(runId);
      expect(stuck).not.toContain(busy);
      expect(await store.transaction((tx) => tx.stillStuck([runId, busy], 10))).toEqual([runId]);
      expect(await store.transaction((tx) => tx.stillStuck([runId], 3_600_000))).toEqual([]);
      expect(
        await store.transaction((tx) => tx.existingRuns([runId, '00000000-0000-4000-8000-0000000000ff'])),
      ).toEqual([runId]);
    });

    it('finds a compensating run with nothing that can wake it, and not a paused one', async () => {
      const { store, ns, runId } = await setup();
      const paused = await insertRun(store, await deploy(store, ns));
      // A compensating run runs its compensations as tasks: when a report is lost it stalls like a running
      // one. A paused run waits for an operator on purpose.
      await lockAndWrite(fixture(), runId, { runUpdates: [{ runId, status: 'compensating' }] });
      await lockAndWrite(fixture(), paused, { runUpdates: [{ runId: paused, status: 'paused' }] });
      await new Promise((r) => setTimeout(r, 30));
      const stuck = await store.stuckRuns(10, 100_000);
      expect(stuck).toContain(runId);
      expect(stuck).not.toContain(paused);
      expect(await store.transaction((tx) => tx.stillStuck([runId, paused], 10))).toEqual([runId]);
      // With a compensation queued it is not stuck.
      await queueTask(store, runId, ns, { nodeId: 'a.compensate' });
      expect(await store.stuckRuns(10, 100_000)).not.toContain(runId);
      expect(await store.transaction((tx) => tx.stillStuck([runId], 10))).toEqual([]);
    });

    it('says which parent attempts still run', async () => {
      const { store, ns, runId } = await setup();
      await queueTask(store, runId, ns, { nodeId: 'a' });
      await lease(store, leaseRequest(ns));
      await queueTask(store, runId, ns, { nodeId: 'b' });
      const got = await store.transaction((tx) =>
        tx.lockParentTasks([
          { runId, nodeId: 'a', iteration: '', attempt: 1 },
          { runId, nodeId: 'b', iteration: '', attempt: 1 },
          { runId, nodeId: 'c', iteration: '', attempt: 1 },
        ]),
      );
      expect(got.map((r) => [r.nodeId, r.running]).sort()).toEqual([
        ['a', true],
        ['b', false],
      ]);
    });
  });
}
