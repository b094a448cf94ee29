import type { Action, Workflow } from '@weft/core';
import type { LockedRun } from '../../store/records.js';
import type { NewTaskRow, RunUpdateRow, TaskUpdateRow, WriteSet } from '../../store/write-set.js';
import type { TaskHandOver } from '../hand-over.js';
import type { HumanTaskSinks } from '../human-task-events.js';
import type { PassReport } from '../pass-report.js';

/** A row as a pass still fills it in. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A task row a pass inserts or updates. */
export type TouchedRow =
  | { readonly kind: 'new'; readonly row: Mutable<NewTaskRow> }
  | { readonly kind: 'update'; readonly row: Mutable<TaskUpdateRow> };

/** The key of one attempt of a node instance, for the rows a pass touches. */
export const attemptKey = (a: { nodeId: string; iteration: string; attempt: number }) =>
  `${a.nodeId}\u0000${a.iteration}\u0000${a.attempt}`;

/**
 * What turning one run's actions into writes works on: the pass's write set and the run's state within
 * the pass. One scope serves every action of one decision, in order.
 */
export interface ActionScope {
  readonly run: LockedRun;
  /** The run's definition, for its status callback. */
  readonly workflow: Workflow | undefined;
  readonly writes: WriteSet;
  /** Row ids of the run's loaded node instances and of the rows this decision creates, by task key. */
  readonly ids: Map<string, string>;
  /** Rows this decision inserts or updates, by `attemptKey`: one statement changes a row once. */
  readonly touched: Map<string, TouchedRow>;
  /** Where the pass's queued tasks go. */
  readonly handOver: TaskHandOver;
  /** Which sinks hear of human tasks opening and expiring, per namespace (none without it). */
  readonly humanTaskSinks: HumanTaskSinks | null;
  /** History and finished runs, reported after commit. */
  readonly report: PassReport;
  /** The run's last history sequence number in this pass. */
  seq: number;
  /** Merges a change into the run's row update. */
  updateRun(change: Omit<RunUpdateRow, 'runId'>): void;
  /** The run's row update so far in this pass. */
  runUpdate(): RunUpdateRow | undefined;
  /** Asks for another decision on the run after this transaction. */
  requestDecision(): void;
}

/** One action of a kind. */
export type ActionOf<K extends Action['kind']> = Extract<Action, { kind: K }>;

/** Turns one action of kind `K` into writes. */
export type ActionWriter<K extends Action['kind']> = (scope: ActionScope, action: ActionOf<K>) => void;
