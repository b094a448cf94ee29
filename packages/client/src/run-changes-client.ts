import { ApiClient } from './api-client.js';
import type {
  ForkLinks,
  ForkOptions,
  MoveAnswer,
  MovePlan,
  MovePlanRequest,
  MoveTarget,
} from './move-types.js';
import type { Asking, Run } from './types.js';

/** The calls that change which version a run follows, or start a run from another: moves and forks. */
export class RunChangesClient extends ApiClient {
  /** Starts a new run from a run, reusing the outputs of `up_to_node` and every node before it. */
  forkRun(id: string, options: ForkOptions = {}): Promise<Run & { forked_from: string }> {
    return this.call('POST', `/v1/runs/${encodeURIComponent(id)}/fork`, options);
  }

  /** The run a run was forked from, and the runs forked from it. */
  forks(id: string): Promise<ForkLinks> {
    return this.call('GET', `/v1/runs/${encodeURIComponent(id)}/forks`);
  }

  /** Says, per run, whether it can move to another version of its definition, and why not. */
  planMove(request: MovePlanRequest): Promise<MovePlan> {
    return this.call('POST', '/v1/runs/migrate/plan', request);
  }

  /** Moves the named runs (the movable ones of a plan), each checked again under its lock. */
  moveRuns(request: MoveTarget & Asking & { run_ids: string[] }): Promise<MoveAnswer> {
    return this.call('POST', '/v1/runs/migrate', request);
  }
}
