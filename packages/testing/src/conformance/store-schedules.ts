import type { NewHumanTaskRow, ScheduleSpec } from '@weft/engine';
import { describe, expect, it } from 'vitest';
import {
  deploy,
  type Fixture,
  freshNamespace,
  insertRun,
  queueTask,
  sleep,
  writes,
} from './store-fixtures.js';

/** Schedules and human tasks, as far as the store's interface goes. */
export function scheduleTests(fixture: () => Fixture): void {
  const spec = (namespace: string, name: string, nextAt: Date | null): ScheduleSpec => ({
    namespace,
    name,
    definition: 'conformance',
    version: null,
    cron: '*/5 * * * *',
    timezone: 'UTC',
    input: { from: name },
    overlap: 'skip',
    paused: false,
    nextAt,
  });

  describe('schedules', () => {
    it('are stored, replaced, paused and deleted', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const due = new Date(Date.now() + 3_600_000);
      const put = await store.transaction((tx) => tx.putSchedule(spec(ns, 'nightly', due)));
      expect(put).toMatchObject({
        name: 'nightly',
        input: { from: 'nightly' },
        paused: false,
        lastRunId: null,
      });
      await store.transaction((tx) => tx.putSchedule({ ...spec(ns, 'nightly', due), cron: '0 3 * * *' }));
      expect((await store.getSchedule(ns, 'nightly'))?.cron).toBe('0 3 * * *');
      const paused = await store.transaction((tx) => tx.pauseSchedule(ns, 'nightly', true, null));
      expect(paused).toMatchObject({ paused: true, nextAt: null });
      expect((await store.listSchedules(ns)).map((s) => s.name)).toEqual(['nightly']);
      expect(await store.transaction((tx) => tx.deleteSchedule(ns, 'nightly'))).toBe(true);
      expect(await store.getSchedule(ns, 'nightly')).toBeNull();
      expect(await store.transaction((tx) => tx.pauseSchedule(ns, 'nightly', false, due))).toBeNull();
    });

    it('a due schedule is locked by one of several concurrent firers; its fire is recorded', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      await store.transaction((tx) => tx.putSchedule(spec(ns, 'due', new Date(Date.now() - 1000))));
      await store.transaction((tx) => tx.putSchedule(spec(ns, 'later', new Date(Date.now() + 3_600_000))));
      const due = (await store.dueSchedules(10_000)).filter((s) => s.namespace === ns);
      expect(due).toEqual([{ namespace: ns, name: 'due' }]);
      const next = new Date(Date.now() + 300_000);
      const peers = await fixture().peers(4);
      const fired = await Promise.all(
        peers.map((peer, i) =>
          peer.transaction(async (tx) => {
            const s = await tx.lockDueSchedule(ns, 'due');
            if (!s) return false;
            await sleep(40);
            await tx.recordScheduleFire({
              namespace: ns,
              name: 'due',
              nextAt: next,
              bufferedAt: null,
              lastAt: s.nextAt,
              lastRunId: null,
              lastOutcome: `fired by ${i}`,
            });
            return true;
          }),
        ),
      );
      expect(fired.filter(Boolean)).toHaveLength(1);
      expect(await store.getSchedule(ns, 'due')).toMatchObject({
        nextAt: next,
        lastOutcome: expect.stringMatching(/^fired by/),
      });
      expect(await store.transaction((tx) => tx.lockDueSchedule(ns, 'later'))).toBeNull();
    });
  });

  /** A run whose human node's attempt is running, with its open inbox row. */
  async function openHumanTask(shown: Pick<NewHumanTaskRow, 'title' | 'description' | 'assignees' | 'form'>) {
    const { store } = fixture();
    const ns = freshNamespace();
    const def = await deploy(store, ns);
    const runId = await insertRun(store, def);
    const task = await queueTask(store, runId, ns, { copies: 0 });
    await store.transaction(async (tx) => {
      await tx.lockRuns([runId], 'wait');
      await tx.write(
        writes({
          taskUpdates: [
            { runId, nodeId: 'a', iteration: '', attempt: 1, expect: 'queued', status: 'running' },
          ],
          humanTasks: [
            {
              ...shown,
              runId,
              taskId: task.taskId,
              namespace: ns,
              definition: def.name,
              nodeId: 'a',
              iteration: '',
              attempt: 1,
              deadlineAt: null,
            },
          ],
        }),
      );
    });
    return { store, ns, runId, task };
  }

  describe('human tasks', () => {
    it('one of several concurrent claims wins; the answer completes the attempt', async () => {
      const { store, ns, runId, task } = await openHumanTask({
        title: 'Approve',
        description: null,
        assignees: ['ann', 'bob'],
        form: null,
      });
      expect(
        (await store.listHumanTasks({ namespace: ns, assignee: 'ann', limit: 10 })).map((h) => h.taskId),
      ).toEqual([task.taskId]);
      expect(await store.listHumanTasks({ namespace: ns, assignee: 'eve', limit: 10 })).toEqual([]);
      const peers = await fixture().peers(4);
      const claims = await Promise.all(
        peers.map((peer, i) =>
          peer.transaction(async (tx) => {
            const claimed = await tx.claimHumanTask(ns, task.taskId, `user${i}`);
            await sleep(30);
            return claimed;
          }),
        ),
      );
      const won = claims.filter((c) => c !== null);
      expect(won).toHaveLength(1);
      const winner = won[0]!.claimedBy!;
      expect(
        await store.transaction((tx) => tx.completeHumanTask(ns, task.taskId, 'intruder', { ok: true })),
      ).toBeNull();
      expect(
        await store.transaction((tx) => tx.completeHumanTask(ns, task.taskId, winner, { ok: true })),
      ).toEqual({
        nodeId: 'a',
        iteration: '',
        attempt: 1,
      });
      expect(await store.getHumanTask(task.taskId)).toMatchObject({
        state: 'completed',
        completedBy: winner,
        data: { ok: true },
      });
      expect((await store.listTasks(runId))[0]).toMatchObject({ status: 'completed', output: { ok: true } });
    });

    it('a task whose attempt ended without an answer leaves the open inbox and is tidied as cancelled', async () => {
      const { store, ns, runId, task } = await openHumanTask({
        title: 'Look',
        description: 'at it',
        assignees: [],
        form: { type: 'object' },
      });
      expect(
        (await store.listHumanTasks({ namespace: ns, assignee: 'anyone', limit: 10 })).map((h) => h.title),
      ).toEqual(['Look']);
      await store.transaction(async (tx) => {
        await tx.lockRuns([runId], 'wait');
        await tx.write(writes({ cancelOpenWork: [{ runId, reason: 'gone', mode: 'cancel' }] }));
      });
      expect(await store.listHumanTasks({ namespace: ns, limit: 10 })).toEqual([]);
      expect(
        (await store.listHumanTasks({ namespace: ns, state: 'cancelled', limit: 10 })).map((h) => h.taskId),
      ).toEqual([task.taskId]);
      expect(await store.transaction((tx) => tx.claimHumanTask(ns, task.taskId, 'ann'))).toBeNull();
      expect(await store.tidyInbox(100_000)).toBeGreaterThanOrEqual(1);
      expect(await store.getHumanTask(task.taskId)).toMatchObject({
        state: 'cancelled',
        form: { type: 'object' },
      });
    });
  });
}
