import type { EagerSlot, Pass } from '../../decisions/pass.js';
import type { LeasedTask } from '../../store/records.js';
import type { StoreTx } from '../../store/store.js';
import type { TaskDeps } from './task-deps.js';

/**
 * Leases queued tasks for the room a report's worker has left, in the report's own transaction: a busy worker
 * polls only between its reports, so without this, a task queued by a start (or anything that did not hand it
 * to a worker) waits for that worker's next poll. The statement is the poll's own claim (queue row and task
 * change together, SKIP LOCKED: test "reports and polls on separate connections lease each queued task once";
 * invariant 13).
 *
 * It is sent after the decisions and before the writes, so it sees only tasks queued by other transactions.
 * It is not sent when the pass's writes may touch a queued task (they would find it running: an update
 * waiting for `queued` would change nothing, a cancelled run's task would reach the worker; test: "a report
 * whose decision stops its run leases none of the run queued tasks"), with a gate (every lease asks it
 * first), with a dispatcher other than the table queue, or when the first round trip saw nothing queued for
 * the worker's types. Returns null when not sent.
 */
export function leaseQueuedForReport(
  ctx: Pick<TaskDeps, 'extensions' | 'dispatcher'>,
  tx: StoreTx,
  eager: EagerSlot | null,
  pass: Pass,
  queued: ReadonlyMap<string, number> | null,
): Promise<LeasedTask[]> | null {
  if (!eager || !queued || ctx.extensions.gate !== null) return null;
  if (ctx.dispatcher.kind !== 'rows' || ctx.dispatcher.name !== 'table') return null;
  const room = eager.max - pass.leased.length;
  const types = [...eager.taskTypes].filter((t) => queued.has(t));
  if (room <= 0 || types.length === 0) return null;
  const w = pass.writes;
  if (
    w.cancelOpenWork.length > 0 ||
    w.stopChildren.length > 0 ||
    w.taskUpdates.some((u) => u.expect === 'queued')
  )
    return null;
  return tx
    .leaseTasks({
      namespace: eager.namespace,
      taskTypes: types,
      max: room,
      worker: eager.worker,
      leaseMs: eager.leaseMs,
    })
    .then((r) => r.tasks);
}
