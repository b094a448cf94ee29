import type { DecisionContext } from './context.js';
import { decide } from './decide.js';
import type { RunEvent } from './events.js';
import { activate, arrive, completeRun } from './flow.js';
import { sweepCompensation } from './saga.js';
import { MissingState } from './state.js';

/**
 * Looks at every node of a run again, for the stuck-run sweeper: the run is running, but nothing can wake
 * it (an event was lost). Re-deciding is safe because every step is idempotent: an edge whose target
 * already has a task changes nothing, a join counts each branch once, and a run whose sinks are all done
 * completes. A node whose last attempt failed is decided again as a failure (retry or fail the run).
 * Records `run.repaired` so the repair shows in the run's history. A compensating run is looked at by
 * its saga log instead (`sweepCompensation`).
 */
export async function sweepRun(ctx: DecisionContext, idleMs: number): Promise<void> {
  if (ctx.run.status === 'compensating') {
    await sweepCompensation(ctx, idleMs);
    return;
  }
  if (ctx.run.status !== 'running') return;
  const { graph } = ctx.workflow;
  ctx.record('run.repaired', { by: 'sweeper', idle_ms: idleMs });
  if (graph.entries.every((id) => ctx.task(id, '') === null)) {
    for (const id of graph.entries) if (ctx.run.status === 'running') await activate(ctx, id, '', null, []);
    return;
  }
  for (const id of graph.order) {
    if (ctx.run.status !== 'running') return;
    const task = ctx.task(id, '');
    if (!task) continue;
    const node = ctx.workflow.node(id);
    const expired =
      node.kind === 'human' && task.status === 'timed_out' && (node.deadline?.to.length ?? 0) > 0;
    if (task.status === 'completed' || task.status === 'skipped' || expired) {
      for (const next of graph.successors.get(id) ?? []) {
        const deadlineEdge = isDeadlineTarget(ctx, id, next);
        const taken = expired ? deadlineEdge : task.status === 'completed' && !deadlineEdge;
        await arrive(ctx, next, '', { from: id, taken });
      }
    } else if ((task.status === 'failed' || task.status === 'timed_out') && task.error) {
      await replay(ctx, {
        kind: 'node_failed',
        nodeId: id,
        iteration: '',
        attempt: task.attempt,
        error: task.error,
      });
    }
  }
  if (ctx.run.status !== 'running') return;
  const done = graph.sinks.filter((id) => {
    const t = ctx.task(id, '');
    return t?.status === 'completed' || t?.status === 'skipped';
  }).length;
  if (done === graph.sinks.length) {
    if (done > ctx.run.sinksDone) ctx.emit({ kind: 'add_sinks_done', count: done - ctx.run.sinksDone });
    await completeRun(ctx);
  }
}

function isDeadlineTarget(ctx: DecisionContext, from: string, to: string): boolean {
  const node = ctx.workflow.node(from);
  return node.kind === 'human' && node.deadline !== null && node.deadline.to.includes(to);
}

/** Decides an event as if it had arrived now, inside this decision. */
async function replay(ctx: DecisionContext, event: RunEvent): Promise<void> {
  const result = await decide(ctx.workflow, ctx.state(), event, ctx.now);
  if (result.kind === 'needs') throw new MissingState(result.keys);
  for (const action of result.actions) ctx.emit(action);
}
