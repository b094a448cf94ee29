import type { FinishedRun, ObservedEvent, SpanEnd, SpanStart, StepOutcome } from '@weft/engine';
import { armFault } from '@weft/engine/internal';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, type Harness, harness, lease, work } from '../helpers.js';

// Observers, tracers and after-commit hooks hear only of what committed (invariant 7: a start is reported
// after commit). A rollback is forced after the writes with the fault point `pass.after-write`. A late
// emission would be missed by a look right after the rollback: the tests look again once a marker run,
// started after it, has been heard of all the way through a timer and the background decider.

const DIAMOND = `
name: observed
nodes:
  - { id: a, task_type: obs.work }
  - { id: b, task_type: obs.work }
  - { id: c, task_type: obs.work }
  - { id: d, task_type: obs.work }
edges:
  - { from: a, to: [b, c] }
  - { from: b, to: d }
  - { from: c, to: d }
`;

// Started after a rollback: its last event comes through the timer poller and the background decider.
const MARKER = `
name: marker
nodes:
  - { id: pause, kind: wait, duration: 50ms }
`;

const events: ObservedEvent[] = [];
/** Each call's events: one committed transaction's. */
const batches: ObservedEvent[][] = [];
const spans: (({ phase: 'start' } & SpanStart) | ({ phase: 'end' } & SpanEnd))[] = [];
const steps: StepOutcome[] = [];
const finished: FinishedRun[] = [];
let h: Harness;
const disarms: (() => void)[] = [];

beforeAll(async () => {
  h = await harness(
    {},
    {
      observer: {
        onEvents: (batch) => {
          batches.push([...batch]);
          events.push(...batch);
        },
      },
      tracer: {
        startSpan: (s) => void spans.push({ phase: 'start', ...s }),
        endSpan: (s) => void spans.push({ phase: 'end', ...s }),
      },
      hooks: {
        afterStep: (s) => void steps.push(s),
        onRunFinished: (r) => void finished.push(r),
      },
    },
  );
  await h.engine.definitions.deploy('default', DIAMOND);
  await h.engine.definitions.deploy('default', MARKER);
});
afterEach(() => {
  for (const d of disarms.splice(0)) d();
});
afterAll(async () => {
  await h?.close();
});

const rollBack = () =>
  disarms.push(
    armFault('pass.after-write', () => {
      throw new Error('rolled back after the writes');
    }),
  );

/**
 * Starts a marker run and waits (bounded) until the observer has heard it complete and no decision is left
 * to make: whatever the engine would emit late, through any of its paths, it has emitted by then. Returns
 * the events heard meanwhile that are not the marker's.
 */
async function heardAfterMarker(from: number): Promise<ObservedEvent[]> {
  const marker = await h.engine.runs.start({ namespace: 'default', definition: 'marker', input: {} });
  await eventually(
    async () => {
      const done = events.some((e) => e.runId === marker.id && e.type === 'run.completed');
      const [left] = await h.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM weft.decide_queue`;
      return done && left!.n === 0 ? true : undefined;
    },
    20_000,
    'the marker run to be heard complete',
  );
  return events.slice(from).filter((e) => e.runId !== marker.id);
}

describe('observer and tracer', () => {
  it('receive the events of a normal run in order, exactly as history holds them', async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'observed', input: { n: 1 } });
    await work(
      h.engine,
      ['obs.work'],
      (t) => t.nodeId,
      async () => (await h.engine.runs.get(run.id)).status !== 'running',
    );
    // Every committed event once, nothing else; each call in sequence order.
    const seen = events.filter((e) => e.runId === run.id).sort((x, y) => x.seq - y.seq);
    const history = await h.store.readHistory(run.id, 0, 1000);
    expect(seen.map((e) => [e.seq, e.type, e.nodeId])).toEqual(history.map((e) => [e.seq, e.type, e.nodeId]));
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    for (const batch of batches) {
      const mine = batch.filter((e) => e.runId === run.id).map((e) => e.seq);
      expect(mine).toEqual([...mine].sort((x, y) => x - y));
    }
    expect(seen[0]!.type).toBe('run.started');
    expect(seen.at(-1)!.type).toBe('run.completed');
    expect(seen.every((e) => e.definition === 'observed' && e.namespace === 'default')).toBe(true);

    const mine = spans.filter((s) => s.runId === run.id);
    expect(mine[0]).toMatchObject({ phase: 'start', kind: 'run', spanId: run.id, parentId: null });
    expect(mine.at(-1)).toMatchObject({ phase: 'end', kind: 'run', spanId: run.id, outcome: 'ok' });
    for (const node of ['a', 'b', 'c', 'd']) {
      const id = `${run.id}/${node}//1`;
      const start = mine.findIndex((s) => s.spanId === id && s.phase === 'start');
      const end = mine.findIndex((s) => s.spanId === id && s.phase === 'end');
      expect(start).toBeGreaterThan(0);
      expect(end).toBeGreaterThan(start);
      expect(mine[start]).toMatchObject({ parentId: run.id, kind: 'task' });
      expect(mine[end]).toMatchObject({ outcome: 'ok', status: 'completed' });
    }
    expect(
      steps
        .filter((s) => s.runId === run.id)
        .map((s) => s.nodeId)
        .sort(),
    ).toEqual(['a', 'b', 'c', 'd']);
    expect(finished.filter((r) => r.runId === run.id)).toEqual([
      {
        runId: run.id,
        namespace: 'default',
        definition: 'observed',
        status: 'completed',
        output: { d: 'd' },
        error: null,
      },
    ]);
  });

  it('never sees an event of a start that rolled back', async () => {
    const before = events.length;
    rollBack();
    await expect(
      h.engine.runs.start({ namespace: 'default', definition: 'observed', input: { n: 2 } }),
    ).rejects.toThrow('rolled back after the writes');
    expect(events.length).toBe(before);
    for (const d of disarms.splice(0)) d();
    expect(await heardAfterMarker(before)).toEqual([]);
    expect(
      spans.some((s) => s.phase === 'start' && s.kind === 'run' && !events.some((e) => e.runId === s.runId)),
    ).toBe(false);
    const runs = await h.store.listRuns({ namespace: 'default', definition: 'observed', limit: 100 });
    expect(runs.items.every((r) => events.some((e) => e.runId === r.id))).toBe(true);
  });

  it('never sees the events of a report that rolled back, and hears them once it commits', async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'observed', input: { n: 3 } });
    const [a] = await lease(h.engine, ['obs.work'], 1);
    expect(a?.runId).toBe(run.id);
    const before = events.length;
    const stepsBefore = steps.length;
    rollBack();
    await expect(
      h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(a!, 'x')] }),
    ).rejects.toThrow('rolled back after the writes');
    for (const d of disarms.splice(0)) d();
    expect(events.length).toBe(before);
    expect(await heardAfterMarker(before)).toEqual([]);
    expect(steps.length).toBe(stepsBefore);
    const heardBefore = events.length;
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(a!, 'x')] });
    const after = events.slice(heardBefore).filter((e) => e.runId === run.id);
    expect(after.map((e) => e.type)).toContain('task.completed');
    const history = await h.store.readHistory(run.id, 0, 1000);
    const seen = events.filter((e) => e.runId === run.id).sort((x, y) => x.seq - y.seq);
    expect(seen.map((e) => e.seq)).toEqual(history.map((e) => e.seq));
  });
});
