import type { DecisionContext } from '../context.js';
import type { RunEvent } from '../events.js';
import { isDeadlineEdge } from '../labelled-edges.js';
import { sweepCompensation } from '../saga.js';
import type { DecideEvent, EventHandler } from './event-handler.js';

/**
 * Looks at every node of a run again, for the stuck-run sweeper: the run is running, but nothing can wake
 * it (an event was lost). Re-deciding is safe because every step is idempotent: an edge whose target
 * already has a task changes nothing, a join counts each branch once, and a run whose sinks are all done
 * completes. A node whose last attempt failed is decided again as a failure (retry or fail the run).
 * Records `run.repaired` so the repair shows in the run's history. A compensating run is looked at by
 * its saga log instead (`sweepCompensation`).
 */
export const runSwept: EventHandler<'run_swept'> = async (ctx, { idleMs }, decideNext) => {
  if (ctx.run.status === 'compensating') {
    await sweepCompensation(ctx, idleMs);
    return;
  }
  if (ctx.run.status !== 'running') return;
  const { graph } = ctx.workflow;
  ctx.record('run.repaired', { by: 'sweeper', idle_ms: idleMs });
  if (graph.entries.every((id) => ctx.task(id, '') === null)) {
    for (const id of graph.entries)
      if (ctx.run.status === 'running') await ctx.flow.activate(id, '', null, []);
    return;
  }
  for (const id of graph.order) {
    if (ctx.run.status !== 'running') return;
    await sweepNode(ctx, id, decideNext);
  }
  await completeIfSinksDone(ctx);
};

/** Counts the top-level sinks that are done or skipped, and completes the run when all of them are. */
export async function completeIfSinksDone(ctx: DecisionContext): Promise<void> {
  if (ctx.run.status !== 'running') return;
  const { graph } = ctx.workflow;
  const done = graph.sinks.filter((id) => {
    const t = ctx.task(id, '');
    return t?.status === 'completed' || t?.status === 'skipped';
  }).length;
  if (done === graph.sinks.length) {
    if (done > ctx.run.sinksDone) ctx.emit({ kind: 'add_sinks_done', count: done - ctx.run.sinksDone });
    await ctx.flow.completeRun();
  }
}

/** Passes control on again from a finished top-level node, or decides its failure again. */
export async function sweepNode(ctx: DecisionContext, id: string, decideNext: DecideEvent): Promise<void> {
  const task = ctx.task(id, '');
  if (!task) return;
  const node = ctx.workflow.node(id);
  const expired = node.kind === 'human' && task.status === 'timed_out' && (node.deadline?.to.length ?? 0) > 0;
  if (task.status === 'completed' || task.status === 'skipped' || expired) {
    for (const next of ctx.workflow.graph.successors.get(id) ?? []) {
      const deadlineEdge = isDeadlineEdge(ctx, id, next);
      const taken = expired ? deadlineEdge : task.status === 'completed' && !deadlineEdge;
      await ctx.flow.arrive(next, '', { from: id, taken });
    }
  } else if ((task.status === 'failed' || task.status === 'timed_out') && task.error) {
    const event: RunEvent = {
      kind: 'node_failed',
      nodeId: id,
      iteration: '',
      attempt: task.attempt,
      error: task.error,
    };
    await replay(ctx, event, decideNext);
  }
}

/**
 * Decides an event as if it had arrived now, inside this decision: in a fresh context over the state as
 * changed so far (with the default options), whose actions are then taken over.
 */
async function replay(ctx: DecisionContext, event: RunEvent, decideNext: DecideEvent): Promise<void> {
  const fresh = ctx.fork({});
  await decideNext(fresh, event);
  for (const action of fresh.actions) ctx.emit(action);
}
