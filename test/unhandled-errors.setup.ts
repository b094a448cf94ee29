import { afterAll } from 'vitest';

// Vitest fails the run on any unhandled rejection or uncaught exception in a test file, and the suite must
// keep doing so. A process-level listener left behind by the code under test (the server's process guard,
// turned on by `serve({ guardProcess: true })`) would quietly take them over: each file must leave none.
const before = {
  unhandledRejection: process.listenerCount('unhandledRejection'),
  uncaughtException: process.listenerCount('uncaughtException'),
};

afterAll(() => {
  for (const event of ['unhandledRejection', 'uncaughtException'] as const) {
    const left = process.listenerCount(event) - before[event];
    if (left > 0)
      throw new Error(
        `this test file left ${left} '${event}' listener(s) on the process: they hide errors from the suite; remove them`,
      );
  }
});
