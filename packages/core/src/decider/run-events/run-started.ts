import type { EventHandler } from './event-handler.js';

/** The run starts: its entry nodes start, once (a run whose entries have rows has started already). */
export const runStarted: EventHandler<'run_started'> = async (ctx, event) => {
  if (ctx.run.status !== 'running') return;
  const entries = ctx.workflow.graph.entries;
  if (entries.some((id) => ctx.task(id, '') !== null)) return; // already started
  ctx.record('run.started', { input: ctx.run.input, ...(event.by ? { by: event.by } : {}) });
  for (const id of entries) {
    if (ctx.run.status !== 'running') return;
    await ctx.flow.activate(id, '', null, []);
  }
};
