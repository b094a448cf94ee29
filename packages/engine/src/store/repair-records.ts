/** What a sweeper repair changed in its run, taken from the writes of the repair's own decision. */
export interface RepairChange {
  /** History events the repair wrote, in order (`run.repaired` first). */
  readonly events: readonly string[];
  /** Attempts it started, as `node` or `node[iteration]`, with their attempt numbers. */
  readonly tasks: readonly { readonly node: string; readonly iteration: string; readonly attempt: number }[];
  /** Attempts it changed (retried, failed, completed by the engine). */
  readonly taskUpdates: number;
  /** Timers it armed. */
  readonly timers: number;
  /** The run's new status, when the repair changed it (a run that ended, or turned to compensating). */
  readonly status: string | null;
}

/** A repair to write to the audit, in the repair's transaction. */
export interface RepairRow {
  readonly runId: string;
  readonly namespace: string;
  readonly definition: string;
  /** The run's status when found. */
  readonly status: string;
  readonly changed: RepairChange;
  /** The history sequence numbers the repair wrote, first and last. */
  readonly firstSeq: number;
  readonly lastSeq: number;
}

/** A repair as the audit keeps it. */
export interface RepairRecord extends RepairRow {
  /** Increasing: the cursor of the list. */
  readonly id: string;
  readonly repairedAt: Date;
  /** How long the run had been idle when repaired (since its last event, or its start). */
  readonly idleMs: number;
  /** The run's last event before the repair: what it was waiting after. */
  readonly lastEvent: {
    readonly seq: number;
    readonly type: string;
    readonly nodeId: string | null;
    readonly at: string;
  } | null;
  /**
   * Whether the run moved after the repair, as a later round found it: true when it had ended, written
   * history after the repair, or was waiting on an attempt or a timer; false when it was as stuck as
   * before; null until checked.
   */
  readonly moved: boolean | null;
  readonly checkedAt: Date | null;
}

/** Which repairs to list: a namespace's, newest first, before a cursor. */
export interface RepairFilter {
  readonly namespace: string;
  readonly runId?: string;
  /** Only repairs checked and found moved (true), or not (false). */
  readonly moved?: boolean;
  /** Only repairs with an id below this one (the previous page's last). */
  readonly before?: string;
  readonly limit: number;
}

/** What one check of earlier repairs found. */
export interface RepairCheck {
  readonly moved: number;
  readonly stuck: number;
}
