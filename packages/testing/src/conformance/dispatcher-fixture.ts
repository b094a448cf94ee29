import type { Destination, Dispatcher, DispatchTask, Engine, StepHandler, Store } from '@weft/engine';

/**
 * What the dispatcher conformance suite needs from one dispatcher: the store the engine runs on (a
 * dispatcher that joins transactions needs its own store), the dispatcher, a consumer and a way to count
 * the messages waiting. `makeDispatcher` builds a fresh fixture for each test.
 */
export interface DispatcherFixture {
  readonly store: Store;
  readonly dispatcher: Dispatcher;
  /**
   * Outbox destinations the engine needs for this dispatcher (Weft's Redis dispatcher writes outbox rows
   * that its destination relays to Redis); none for most.
   */
  readonly destinations?: readonly Destination[];
  /**
   * Starts taking the engine's messages of these task types and running each with `handler` (leasing by
   * id, or polling the table for Weft's own dispatcher); returns a function that stops and waits.
   */
  consume(engine: Engine, taskTypes: readonly string[], handler: StepHandler): () => Promise<void>;
  /** Messages sent and not yet taken (due or held back). */
  pending(): Promise<number>;
  /**
   * Sends one more message for an attempt, as a duplicate or a redelivery would (for Weft's own dispatcher:
   * another queue row).
   */
  duplicate(task: DispatchTask): Promise<void>;
  /** Closes what the fixture opened (the engine is stopped by the suite). */
  close(): Promise<void>;
}
