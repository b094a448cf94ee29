import type { Task } from '../api/types.js';

/** A node instance (a node at one iteration) and its attempts, latest last. */
export interface NodeInstance {
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempts: Task[];
  readonly latest: Task;
}

/** The node instances of a run, from its task attempts, keyed `node@iteration`. */
export function nodeInstances(tasks: readonly Task[]): Map<string, NodeInstance> {
  const groups = new Map<string, Task[]>();
  for (const task of tasks) {
    const key = `${task.node_id}@${task.iteration}`;
    const list = groups.get(key) ?? [];
    list.push(task);
    groups.set(key, list);
  }
  const out = new Map<string, NodeInstance>();
  for (const [key, attempts] of groups) {
    attempts.sort((a, b) => a.attempt - b.attempt);
    const latest = attempts[attempts.length - 1]!;
    out.set(key, { nodeId: latest.node_id, iteration: latest.iteration, attempts, latest });
  }
  return out;
}

/** The iterations (loop passes, map items) a container node has started, in order. */
export function iterationsOf(
  instances: Map<string, NodeInstance>,
  containerId: string,
  parent: string,
): string[] {
  const out: string[] = [];
  for (const instance of instances.values()) {
    if (instance.nodeId !== containerId || instance.iteration === parent) continue;
    const prefix = parent === '' ? '' : `${parent}/`;
    if (!instance.iteration.startsWith(prefix)) continue;
    const rest = instance.iteration.slice(prefix.length);
    if (/^\d+$/.test(rest)) out.push(instance.iteration);
  }
  return out.sort((a, b) => Number(a.split('/').at(-1)) - Number(b.split('/').at(-1)));
}

/** How a node instance is shown: its latest attempt's status, or "pending" when it has none yet. */
export function shownStatus(instance: NodeInstance | undefined): string {
  return instance?.latest.status ?? 'pending';
}
