import type { Json } from '@weft/client';

/** A benchmark workload: a definition and how many runs of it. */
export interface Workload {
  readonly id: 'W1' | 'W2' | 'W3' | 'W4';
  readonly title: string;
  readonly runs: number;
  readonly yaml: string;
  /** Steps (tasks) per run. */
  readonly steps: number;
  /** Predecessors of each node, for step-to-step latency. */
  readonly predecessors: Readonly<Record<string, readonly string[]>>;
  /** Each run's input (none by default). */
  readonly input?: Json;
  /** Runs of the warm-up, when a fifth of the runs (at least 20) would be too many. */
  readonly warmRuns?: number;
  /**
   * A map whose items are the run's steps: item `i` (node `<node>[i]` in the timings) may start once
   * `i - concurrency + 1` items have ended, so its predecessor is the `(i - concurrency + 1)`th item to end,
   * whichever that was; the first `concurrency` items are first tasks.
   */
  readonly map?: { readonly node: string; readonly concurrency: number };
}

const task = (id: string) =>
  `  - { id: ${id}, task_type: bench.noop, retry: { max_attempts: 3, delay: 0s } }`;

/** W1: a 6-node diamond: a, then b c d e in parallel, then f. */
export function w1(runs = 200): Workload {
  const mids = ['b', 'c', 'd', 'e'];
  return {
    id: 'W1',
    title: '6-node diamond',
    runs,
    steps: 6,
    yaml: [
      'name: bench-w1',
      'nodes:',
      task('a'),
      ...mids.map(task),
      task('f'),
      'edges:',
      `  - { from: a, to: [${mids.join(', ')}] }`,
      ...mids.map((m) => `  - { from: ${m}, to: f }`),
    ].join('\n'),
    predecessors: { a: [], b: ['a'], c: ['a'], d: ['a'], e: ['a'], f: mids },
  };
}

/** W2: a 10-node chain. */
export function w2(runs = 500): Workload {
  const ids = Array.from({ length: 10 }, (_, i) => `s${i}`);
  return {
    id: 'W2',
    title: '10-node chain',
    runs,
    steps: 10,
    yaml: [
      'name: bench-w2',
      'nodes:',
      ...ids.map(task),
      'edges:',
      ...ids.slice(1).map((id, i) => `  - { from: ${ids[i]}, to: ${id} }`),
    ].join('\n'),
    predecessors: Object.fromEntries(ids.map((id, i) => [id, i === 0 ? [] : [ids[i - 1]!]])),
  };
}

/** W3: a fan-out of 100 parallel tasks and a join. */
export function w3(runs = 20, width = 100): Workload {
  const branches = Array.from({ length: width }, (_, i) => `p${i}`);
  return {
    id: 'W3',
    title: `fan-out of ${width} and a join`,
    runs,
    steps: width + 2,
    yaml: [
      'name: bench-w3',
      'nodes:',
      task('fan'),
      ...branches.map(task),
      task('join'),
      'edges:',
      `  - { from: fan, to: [${branches.join(', ')}] }`,
      ...branches.map((b) => `  - { from: ${b}, to: join }`),
    ].join('\n'),
    predecessors: { fan: [], ...Object.fromEntries(branches.map((b) => [b, ['fan']])), join: branches },
  };
}

/** W4: a map over `items` items (no-op tasks), at most `concurrency` at once. */
export function w4(runs = 10, items = 5000, concurrency = 500): Workload {
  return {
    id: 'W4',
    title: `map over ${items} items, ${concurrency} at once`,
    runs,
    steps: items,
    yaml: [
      'name: bench-w4',
      'nodes:',
      `  - id: each`,
      `    kind: map`,
      `    items: input.items`,
      `    concurrency: ${concurrency}`,
      `    task: { task_type: bench.noop, input: { position: index }, retry: { max_attempts: 3, delay: 0s } }`,
    ].join('\n'),
    predecessors: {},
    input: { items: Array.from({ length: items }, (_, i) => i) },
    warmRuns: 2,
    map: { node: 'each.task', concurrency },
  };
}
