import type { Json } from '../../json.js';
import type { EventHandler } from './event-handler.js';
import { completeIfSinksDone, sweepNode } from './run-swept.js';

/**
 * A forked run starts: it records where it came from, finishes the nodes it reuses with the other run's
 * outputs (each recorded as `task.reused`), starts the entry nodes it does not reuse, and passes control on
 * from the reused nodes in graph order, as a swept run would. A run that has rows already has started.
 */
export const runForked: EventHandler<'run_forked'> = async (ctx, event, decideNext) => {
  if (ctx.run.status !== 'running') return;
  const { graph } = ctx.workflow;
  if (graph.entries.some((id) => ctx.task(id, '') !== null)) return; // already started
  ctx.record('run.started', { input: ctx.run.input, ...(event.by ? { by: event.by } : {}) });
  const reused = event.reused.map((r) => r.nodeId);
  ctx.record('run.forked', {
    from_run: event.fromRunId,
    up_to_node: event.upToNode,
    reused,
    ...(event.by ? { by: event.by } : {}),
  });
  for (const node of event.reused) {
    const at = { nodeId: node.nodeId, iteration: '', attempt: 1 };
    ctx.emit({
      kind: 'create_task',
      ...at,
      status: node.status,
      input: null,
      output: node.output,
      error: null,
      arrivals: [],
      dispatch: null,
    });
    ctx.record(
      'task.reused',
      { from_run: event.fromRunId, status: node.status, output: node.output as Json },
      at,
    );
  }
  const taken = new Set(reused);
  for (const id of graph.entries)
    if (!taken.has(id) && ctx.run.status === 'running') await ctx.flow.activate(id, '', null, []);
  for (const id of graph.order) {
    if (ctx.run.status !== 'running') return;
    if (taken.has(id)) await sweepNode(ctx, id, decideNext);
  }
  await completeIfSinksDone(ctx);
};
