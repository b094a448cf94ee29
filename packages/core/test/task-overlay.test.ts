import { describe, expect, it } from 'vitest';
import { TaskOverlay } from '../src/decider/task-overlay.js';
import { applyAction, decide, type RunView, type TaskState } from '../src/index.js';
import { workflowOf } from './sim.js';

const run: RunView = {
  id: 'r',
  definition: 'd',
  version: 1,
  status: 'running',
  input: null,
  vars: {},
  sinksDone: 0,
};

function task(nodeId: string, status: TaskState['status'], attempt = 1): TaskState {
  return { nodeId, iteration: '', attempt, status, input: null, output: null, error: null, arrivals: [] };
}

// A small deterministic generator, so that a failure repeats.
function lcg(seed: number) {
  let x = seed;
  return (n: number) => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return (x >>> 12) % n;
  };
}

const sorted = (m: ReadonlyMap<string, TaskState | null>) =>
  [...m.entries()].sort(([a], [b]) => a.localeCompare(b));

describe('a decision state overlay', () => {
  it('reads as a map with the same changes, and leaves every state it was laid on as it was', () => {
    const next = lcg(7);
    const keys = Array.from({ length: 60 }, (_, i) => `n${i}\u0000`);
    let state: ReadonlyMap<string, TaskState | null> = new Map(keys.slice(0, 30).map((k) => [k, null]));
    const model = new Map(state);
    const kept: { state: ReadonlyMap<string, TaskState | null>; entries: [string, TaskState | null][] }[] = [
      { state, entries: sorted(state) },
    ];
    // 200 decisions in a row (past the depth at which the stack is flattened), each a few changes.
    for (let d = 0; d < 200; d++) {
      const overlay = TaskOverlay.over(state);
      for (let c = next(4); c >= 0; c--) {
        const key = keys[next(keys.length)]!;
        const value =
          next(5) === 0 ? null : task(key, (['queued', 'running', 'completed'] as const)[next(3)]!, d);
        overlay.set(key, value);
        model.set(key, value);
      }
      expect(sorted(overlay)).toEqual(sorted(model));
      expect(overlay.size).toBe(model.size);
      for (const key of keys) {
        expect(overlay.has(key)).toBe(model.has(key));
        expect(overlay.get(key)).toEqual(model.get(key));
      }
      expect([...overlay.keys()].sort()).toEqual([...model.keys()].sort());
      expect([...overlay.values()]).toHaveLength(model.size);
      kept.push({ state: overlay, entries: sorted(overlay) });
      state = overlay;
    }
    // Later decisions changed none of the states before them.
    for (const k of kept) expect(sorted(k.state)).toEqual(k.entries);
  });

  it('cancels open work over an overlay as over a map, without touching the state below', () => {
    const base = new Map<string, TaskState | null>([
      ['a\u0000', task('a', 'completed')],
      ['b\u0000', task('b', 'running')],
      ['c\u0000', task('c', 'queued')],
      ['d\u0000', null],
    ]);
    const overlay = TaskOverlay.over(base);
    overlay.set('e\u0000', task('e', 'waiting'));
    const plain = new Map(overlay);
    applyAction(overlay, run, { kind: 'cancel_open_work', reason: 'test' });
    applyAction(plain, run, { kind: 'cancel_open_work', reason: 'test' });
    expect(sorted(overlay)).toEqual(sorted(plain));
    expect(overlay.get('b\u0000')?.status).toBe('cancelled');
    expect(overlay.get('e\u0000')?.status).toBe('cancelled');
    expect(base.get('b\u0000')?.status).toBe('running');
  });

  it('lets a decision read only the instances it names, however many the state it is given holds', async () => {
    // Every walk over the given state is counted: a decision that copied it (as each one did before the
    // overlay) would walk all 5,000 rows for every event of a pass.
    class CountingMap extends Map<string, TaskState | null> {
      walks = 0;
      override entries() {
        this.walks++;
        return super.entries();
      }
      override [Symbol.iterator]() {
        this.walks++;
        return super[Symbol.iterator]();
      }
      override forEach(...args: Parameters<Map<string, TaskState | null>['forEach']>) {
        this.walks++;
        super.forEach(...args);
      }
    }
    const chain = workflowOf(`
name: chain
nodes:
  - { id: a, task_type: t }
  - { id: b, task_type: t }
edges:
  - { from: a, to: b }
`);
    const tasks = new CountingMap(Array.from({ length: 5000 }, (_, i) => [`other${i}\u0000`, null] as const));
    tasks.set('a\u0000', { ...task('a', 'completed'), output: { n: 1 } });
    tasks.set('b\u0000', null);
    tasks.walks = 0;
    const result = await decide(
      chain,
      { run: { ...run, definition: 'chain' }, tasks },
      { kind: 'node_completed', nodeId: 'a', iteration: '', attempt: 1 },
      new Date('2026-01-01T00:00:00Z'),
    );
    expect(result.kind).toBe('decided');
    if (result.kind !== 'decided') return;
    expect(result.actions.filter((a) => a.kind === 'create_task').map((a) => a.nodeId)).toEqual(['b']);
    expect(result.state.tasks.get('b\u0000')?.status).toBe('queued');
    expect(tasks.walks).toBe(0);
    expect(tasks.get('b\u0000')).toBeNull();
  });
});
