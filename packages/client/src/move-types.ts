/** Which runs to move, and where to: runs move between versions of one definition. */
export interface MoveTarget {
  readonly definition: string;
  readonly to_version: number;
  /** Old node id to new node id, for nodes whose id changed. */
  readonly node_map?: Record<string, string>;
}

/** What a plan looks at: the runs named, or a page of the running (or paused) runs of a version. */
export interface MovePlanRequest extends MoveTarget {
  readonly run_ids?: string[];
  readonly from_version?: number;
  readonly status?: 'running' | 'paused';
  readonly limit?: number;
  readonly cursor?: string;
}

/** Whether each run can move, and why not; `next_cursor` continues (null when every run was seen). */
export interface MovePlan {
  readonly definition: string;
  readonly to_version: number;
  readonly movable: number;
  readonly refused: number;
  readonly runs: { run_id: string; from_version: number | null; movable: boolean; reasons: string[] }[];
  readonly next_cursor: string | null;
}

/** What a move did, per run. */
export interface MoveAnswer {
  readonly definition: string;
  readonly to_version: number;
  readonly moved: number;
  readonly refused: number;
  readonly runs: { run_id: string; from_version: number | null; moved: boolean; reasons: string[] }[];
}

/** What a fork changes: the input, the version, and the node up to which outputs are reused. */
export interface ForkOptions {
  readonly input?: unknown;
  readonly version?: number;
  readonly up_to_node?: string;
  readonly by?: string;
}

/** A run's fork links, both ways. */
export interface ForkLinks {
  readonly run_id: string;
  readonly forked_from: string | null;
  readonly up_to_node: string | null;
  readonly forks: string[];
}
