import { downstreamOf } from '../../definition/graph.js';
import type { Workflow } from '../../definition/workflow.js';
import type { DecisionContext } from '../context.js';
import { type TaskState, type TaskStatus, taskKey } from '../state.js';
import { atOwnLevel } from './body-rerun.js';
import { type Instance, inGraphOrder } from './instances.js';

/**
 * Running node instances again (an operator's retry or rerun), as new attempts that never overwrite the
 * old ones.
 *
 * Every instance chosen gets a new attempt in `waiting` status: a placeholder that tells `arrive` this
 * instance is to run again. Then control is passed again from every instance that is done and is not run
 * again, to the instances that wait for it. That re-drive is what restores joins (their arrivals are
 * rebuilt from scratch rather than copied) and also what repairs an instance that finished while the run
 * was no longer running and so never passed control on. Entry instances start directly. The count of
 * finished sinks is recomputed from the instances rather than adjusted, for the same reason.
 */

const UNFINISHED: ReadonlySet<TaskStatus> = new Set(['failed', 'timed_out', 'cancelled']);
const DONE: ReadonlySet<TaskStatus> = new Set(['completed', 'skipped']);

/** The instances a retry runs again: those whose latest attempt failed, timed out or was cancelled. */
export function retrySet(tasks: readonly TaskState[]): TaskState[] {
  return tasks.filter((t) => UNFINISHED.has(t.status));
}

/**
 * The instances a rerun from `from` runs again: `from` and every instance downstream of it (same
 * iteration) that has run, plus whatever did not finish (the retry set), without which the run could
 * not complete.
 */
export function rerunSet(workflow: Workflow, tasks: readonly TaskState[], from: Instance): TaskState[] {
  const down = downstreamOf(workflow.graph, from.nodeId);
  return tasks.filter(
    (t) => (down.has(t.nodeId) && t.iteration === from.iteration) || UNFINISHED.has(t.status),
  );
}

/**
 * True when a finished instance passes control on (a taken branch): it completed, or an operator skipped
 * it (the operator's skip continues the run). A skip of a branch not taken passes a skip on.
 */
export function passesOn(task: TaskState): boolean {
  return task.status === 'completed' || (task.status === 'skipped' && task.error?.reason === 'skipped');
}

/**
 * Moves the run back to running and runs `chosen` again (each instance's latest attempt as loaded). The
 * decision's state must be complete (`needsWholeRun`).
 */
export async function runAgain(ctx: DecisionContext, chosen: readonly TaskState[]): Promise<void> {
  const { graph } = ctx.workflow;
  const again = inGraphOrder(ctx.workflow, chosen);

  ctx.emit({ kind: 'set_run_status', status: 'running', reopen: true });
  for (const t of again) {
    ctx.emit({
      kind: 'create_task',
      nodeId: t.nodeId,
      iteration: t.iteration,
      attempt: t.attempt + 1,
      status: 'waiting',
      input: null,
      output: null,
      error: null,
      arrivals: [],
      dispatch: null,
    });
  }

  // The instances as they are now: the chosen ones wait, the rest keep their outcome.
  const now = ctx.allTasks();
  const sinks = new Set(graph.sinks);
  const sinksDone = now.filter((t) => sinks.has(t.nodeId) && t.iteration === '' && DONE.has(t.status)).length;
  if (sinksDone !== ctx.run.sinksDone)
    ctx.emit({ kind: 'add_sinks_done', count: sinksDone - ctx.run.sinksDone });

  for (const t of again) {
    if (ctx.run.status !== 'running') return;
    if ((graph.predecessors.get(t.nodeId) ?? []).length > 0) continue;
    await ctx.flow.activate(t.nodeId, t.iteration, ctx.task(t.nodeId, t.iteration), []);
  }

  const chosenKeys = new Set(again.map((t) => taskKey(t.nodeId, t.iteration)));
  // A loop's pass rows and a map's item rows are not instances of the node at that iteration: no re-drive.
  const kept = now.filter(
    (t) =>
      DONE.has(t.status) && !chosenKeys.has(taskKey(t.nodeId, t.iteration)) && atOwnLevel(ctx.workflow, t),
  );
  for (const done of inGraphOrder(ctx.workflow, kept)) {
    for (const next of graph.successors.get(done.nodeId) ?? []) {
      if (ctx.run.status !== 'running') return;
      const target = ctx.task(next, done.iteration);
      if (target !== null && target.status !== 'waiting') continue; // finished and kept: nothing to redo
      await ctx.flow.arrive(next, done.iteration, { from: done.nodeId, taken: passesOn(done) });
    }
  }

  // Only a join that fires on its first branch can leave every sink done with work still chosen.
  if (ctx.run.status === 'running' && ctx.run.sinksDone >= graph.sinks.length) await ctx.flow.completeRun();
}
