import type { Store, WorkloadSnapshot } from '@weft/engine';
import { LabelFold, OTHER_LABEL, PromMeter, WorkloadCache } from '@weft/server';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';

const EMPTY: WorkloadSnapshot = { queued: [], running: [], outbox: [], humanTasksOpen: [], timersDue: 0 };

describe('LabelFold', () => {
  it('keeps the first values it sees and counts the rest as (other)', () => {
    const fold = new LabelFold(2);
    expect(['a', 'b', 'a', 'c', 'b', 'd'].map((v) => fold.value(v))).toEqual([
      'a',
      'b',
      'a',
      OTHER_LABEL,
      'b',
      OTHER_LABEL,
    ]);
  });
});

describe('PromMeter', () => {
  it('folds definitions and task types past their limits into (other)', async () => {
    const registry = new Registry();
    const fold = () => new LabelFold(2);
    const meter = new PromMeter(registry, {
      namespace: fold(),
      definition: fold(),
      taskType: fold(),
      destination: fold(),
    });
    for (const d of ['a', 'b', 'c', 'd']) meter.runFinished('ns', d, 'completed', 1);
    for (const ty of ['x', 'y', 'z']) meter.taskFinished(ty, 'completed', 0.5);
    const text = await registry.metrics();
    const finished = [...text.matchAll(/^weft_runs_finished_total\{([^}]*)\} (\d+)$/gm)].map((m) => [
      m[1],
      m[2],
    ]);
    expect(finished).toEqual([
      ['namespace="ns",definition="a",status="completed"', '1'],
      ['namespace="ns",definition="b",status="completed"', '1'],
      ['namespace="ns",definition="(other)",status="completed"', '2'],
    ]);
    expect(text).toMatch(/^weft_task_duration_seconds_count\{task_type="\(other\)",status="completed"\} 1$/m);
  });
});

describe('WorkloadCache', () => {
  // A stand-in for the store's one read: what is tested is how often the cache asks for it.
  const counting = (read: () => Promise<WorkloadSnapshot>) => {
    const calls = { n: 0 };
    const store = {
      workload: () => {
        calls.n++;
        return read();
      },
    } as unknown as Store;
    return { store, calls };
  };

  it('reads the store once for a storm of scrapes within its life', async () => {
    const { store, calls } = counting(async () => EMPTY);
    const cache = new WorkloadCache(store, null, 60_000);
    const got = await Promise.all(Array.from({ length: 50 }, () => cache.get()));
    expect(got.every((g) => g === EMPTY)).toBe(true);
    await cache.get();
    expect(calls.n).toBe(1);
  });

  it('reads again once its life is over', async () => {
    const { store, calls } = counting(async () => EMPTY);
    const cache = new WorkloadCache(store, null, 0);
    await cache.get();
    await cache.get();
    expect(calls.n).toBe(2);
  });

  it('serves nothing, and logs, when the read fails', async () => {
    const { store } = counting(async () => {
      throw new Error('connection refused');
    });
    const warned: unknown[] = [];
    const logger = { warn: (...args: unknown[]) => warned.push(args) } as never;
    expect(await new WorkloadCache(store, logger, 60_000).get()).toBeNull();
    expect(warned).toHaveLength(1);
  });

  it('serves nothing from a store without the read', async () => {
    expect(await new WorkloadCache({} as Store, null).get()).toBeNull();
  });
});
