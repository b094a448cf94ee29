import { type EventMessage, type Json, stableId } from '@weft/core';
import { type OutboxWrite, sinkDestination } from '../store/outbox-records.js';

/** A change of a human task that is announced to sinks. */
export type HumanTaskChange = 'opened' | 'claimed' | 'released' | 'answered' | 'expired';

/**
 * Which sinks hear of human task changes, per namespace: a map of namespace to sink names, where `*`
 * names sinks for every namespace. Built from the sinks' `human_tasks` setting on the server.
 */
export class HumanTaskSinks {
  private readonly byNamespace: ReadonlyMap<string, readonly string[]>;

  constructor(byNamespace: Readonly<Record<string, readonly string[]>> = {}) {
    this.byNamespace = new Map(Object.entries(byNamespace));
  }

  /** The sinks of a namespace's human task events (none when nothing is configured). */
  of(namespace: string): readonly string[] {
    const own = this.byNamespace.get(namespace) ?? [];
    const all = this.byNamespace.get('*') ?? [];
    return all.length === 0 ? own : [...new Set([...own, ...all])];
  }
}

/** Where a human task is, for the `source` of its messages. */
export interface HumanTaskSource {
  readonly runId: string;
  readonly namespace: string;
  readonly definition: string;
  readonly version: number;
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
  readonly taskId: string;
}

/**
 * The outbox rows announcing one change of a human task, one per sink, written in the transaction of the
 * change (invariant 7). The message id is derived from the task, the change and `occurrence` (what tells
 * two claims of one task apart), so a redelivery or a replay carries the same id (invariant 12). Each row
 * is tied to the task's attempt row: a change whose attempt insert was absorbed sends nothing.
 */
export function humanTaskEventRows(
  sinks: readonly string[],
  change: HumanTaskChange,
  task: HumanTaskSource,
  data: { readonly [key: string]: Json },
  time: Date,
  occurrence = '',
): OutboxWrite[] {
  if (sinks.length === 0) return [];
  const message: EventMessage = {
    id: stableId('weft.human_task', task.taskId, change, occurrence),
    type: `human_task.${change}`,
    time: time.toISOString(),
    source: {
      namespace: task.namespace,
      run_id: task.runId,
      definition: task.definition,
      version: task.version,
      node_id: task.nodeId,
      iteration: task.iteration,
      attempt: task.attempt,
    },
    data: { task_id: task.taskId, ...data },
  };
  return sinks.map((sink) => ({
    runId: task.runId,
    namespace: task.namespace,
    taskId: task.taskId,
    destination: sinkDestination(sink),
    messageId: message.id,
    payload: { kind: 'publish', topic: null, message },
  }));
}
