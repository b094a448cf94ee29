import type { MappingSource } from '../expr/mapping.js';

/**
 * An event that starts a run of its definition. Each expression reads the event only: `data` (the event's
 * data) and `event` (`{id, name, data}`).
 */
export interface Trigger {
  /** The event name it listens for. */
  readonly event: string;
  /** A JSONata condition; the run starts only when it is `true`. None: every event of the name. */
  readonly filter: string | null;
  /** The run's input, a mapping from the event; none: the event's data as it is. */
  readonly input: MappingSource | null;
  /** A JSONata expression whose value deduplicates runs instead of the event id; none: the event id. */
  readonly idempotency: string | null;
}
