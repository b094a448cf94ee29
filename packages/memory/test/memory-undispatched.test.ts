import { definitionHash, parseDefinition } from '@weft/core';
import { emptyWriteSet, type NewTaskRow, type WriteSet } from '@weft/engine';
import { uuidv7 } from '@weft/engine/internal';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';

// The repair capability of the in-memory store: a queue dispatcher that enqueues after commit relies on
// it to find queued tasks whose message a crash between commit and enqueue lost.

const writes = (parts: Partial<WriteSet>): WriteSet => ({ ...emptyWriteSet(), ...parts });

async function withRun(store: MemoryStore): Promise<string> {
  const parsed = parseDefinition('name: u\nnodes:\n  - { id: a, task_type: work }\n');
  if (!parsed.ok) throw new Error('bad fixture');
  const { record } = await store.transaction((tx) =>
    tx.deployDefinition('default', 'u', definitionHash(parsed.value), 'src', parsed.value),
  );
  const runId = uuidv7();
  await store.transaction((tx) =>
    tx.insertRuns([
      {
        id: runId,
        namespace: 'default',
        definitionId: record.id,
        definitionName: 'u',
        definitionVersion: 1,
        input: {},
      },
    ]),
  );
  return runId;
}

function queued(runId: string, nodeId: string, delayMs = 0): NewTaskRow {
  return {
    id: uuidv7(),
    runId,
    namespace: 'default',
    nodeId,
    iteration: '',
    attempt: 1,
    status: 'queued',
    taskType: 'work',
    priority: 0,
    timeoutMs: null,
    input: null,
    output: null,
    error: null,
    arrivals: [],
    lease: null,
    ...(delayMs > 0 ? { delayMs } : {}),
  };
}

describe('MemoryStore lists queued tasks left without a message', () => {
  it('those without a queue row, once older than asked; a held-back retry from its not-before time', async () => {
    let now = new Date('2030-01-01T00:00:00Z');
    const store = new MemoryStore({ clock: { now: () => now } });
    const runId = await withRun(store);
    const bare = queued(runId, 'bare');
    const onTable = queued(runId, 'on-table');
    const retry = queued(runId, 'retry', 5_000);
    await store.transaction((tx) =>
      tx.write(
        writes({
          newTasks: [bare, onTable, retry],
          queue: [
            {
              taskId: onTable.id,
              runId,
              attempt: 1,
              namespace: 'default',
              taskType: 'work',
              priority: 0,
              delayMs: 0,
            },
          ],
        }),
      ),
    );
    const ids = async (olderThanMs: number) =>
      (await store.undispatchedTasks({ olderThanMs, limit: 10 })).map((t) => t.taskId).sort();
    // Too young for the round; asked by run (a redelivery's re-drive), at once, but a retry only once due.
    expect(await ids(1_000)).toEqual([]);
    const byRun = await store.undispatchedTasks({ olderThanMs: 0, limit: 10, runIds: [runId] });
    expect(byRun).toEqual([
      {
        taskId: bare.id,
        runId,
        attempt: 1,
        namespace: 'default',
        taskType: 'work',
        priority: 0,
        notBefore: null,
      },
    ]);
    now = new Date('2030-01-01T00:00:01.500Z');
    expect(await ids(1_000)).toEqual([bare.id]);
    // The retry waited 5 s before it could start, and counts as queued from then.
    now = new Date('2030-01-01T00:00:05.500Z');
    expect(await ids(1_000)).toEqual([bare.id]);
    now = new Date('2030-01-01T00:00:06.500Z');
    expect(await ids(1_000)).toEqual([bare.id, retry.id].sort());
    expect(await store.undispatchedTasks({ olderThanMs: 0, limit: 1 })).toHaveLength(1);
  });

  it('never reports a task whose transaction is still open (it rolled back here)', async () => {
    const store = new MemoryStore();
    const runId = await withRun(store);
    let opened: () => void = () => {};
    const open = new Promise<void>((r) => {
      opened = r;
    });
    let finish: () => void = () => {};
    const hold = new Promise<void>((r) => {
      finish = r;
    });
    const tx = store
      .transaction(async (t) => {
        await t.write(writes({ newTasks: [queued(runId, 'uncommitted')] }));
        opened();
        await hold;
        throw new Error('rolled back');
      })
      .catch((e: Error) => e.message);
    await open;
    const asked = store.undispatchedTasks({ olderThanMs: 0, limit: 10, runIds: [runId] });
    finish();
    expect(await tx).toBe('rolled back');
    expect(await asked).toEqual([]);
  });
});
