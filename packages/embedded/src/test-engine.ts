import type { EngineConfig } from '@weft/engine';
import { MemoryStore } from '@weft/memory';
import { createEngine, type EmbeddedEngine, type EmbeddedOptions } from './create-engine.js';
import { ManualClock } from './manual-clock.js';

/** Settings for tests: short polls, no cross-process wake-ups, no system tasks. */
export const TEST_CONFIG: Partial<EngineConfig> = {
  decidePollMs: 10,
  timerPollMs: 10,
  leasePollMs: 20,
  relayPollMs: 10,
  schedulePollMs: 50,
  crossProcessWakeups: false,
  systemTasks: false,
};

/**
 * An embedded engine on a fresh in-memory store whose time is a manual clock: a workflow's test runs in
 * milliseconds, and `engine.advance('2d')` makes waits, retry backoffs and timeouts fall due at once.
 */
export function createTestEngine(
  options: Omit<EmbeddedOptions, 'store' | 'manualClock'> & { readonly start?: Date | string } = {},
): EmbeddedEngine & { readonly clock: ManualClock } {
  const { start, config, ...rest } = options;
  const clock = new ManualClock(start);
  const engine = createEngine({
    ...rest,
    store: new MemoryStore({ clock }),
    manualClock: clock,
    config: { ...TEST_CONFIG, ...config },
  });
  return Object.assign(engine, { clock });
}
