import type { Arrival, RunError, TaskState } from './state.js';

/**
 * How a handler moves control through the graph. Node and event handlers are handed it through the
 * decision context (`ctx.flow`) rather than importing the traversal (traversal.ts), which reaches every
 * node kind through the node table: so no handler imports another, and none imports the traversal.
 */
export interface Flow {
  /**
   * Starts node `nodeId` in `iteration`. `waiting` is its join row when branches arrived before, and
   * `arrivals` every branch that has arrived now.
   */
  activate(
    nodeId: string,
    iteration: string,
    waiting: TaskState | null,
    arrivals: readonly Arrival[],
  ): Promise<void>;
  /**
   * Passes control from a finished node along each outgoing edge; `taken` false passes a skip. With
   * `chosen` (a switch's case, a wait's timeout), only edges to those targets are taken.
   */
  propagate(nodeId: string, iteration: string, taken: boolean, chosen?: ReadonlySet<string>): Promise<void>;
  /** A branch reaches `target` (a join waits for the others). */
  arrive(target: string, iteration: string, arrival: Arrival): Promise<void>;
  /** Completes the run with its output mapping (or the outputs of its sinks). */
  completeRun(): Promise<void>;
  /** Fails the run (or starts compensating it): every unfinished attempt and timer is cancelled. */
  failRun(error: RunError): void;
}
