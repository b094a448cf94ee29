import type { EventHandler } from './event-handler.js';

/** A worker's report was refused (a stale lease, a finished attempt): only recorded, for the run's history. */
export const reportRefused: EventHandler<'report_refused'> = async (ctx, event) => {
  ctx.record(
    'task.report_refused',
    {
      report: event.report,
      why: event.why,
      worker: event.worker,
      ...(event.details !== undefined ? { details: event.details } : {}),
    },
    { nodeId: event.nodeId, iteration: event.iteration, attempt: event.attempt },
  );
};
