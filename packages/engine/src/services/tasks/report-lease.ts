import type { EagerSlot, Pass } from '../../decisions/pass.js';
import { LeaseRounds } from '../../store/lease-rounds.js';
import type { LeasedTask } from '../../store/records.js';
import type { FastLease, LeaseRequest, StoreTx } from '../../store/store.js';
import type { TaskDeps } from './task-deps.js';

/** What a report asked to lease for its worker's room, and what the round in its transaction took. */
export interface ReportRound {
  readonly request: LeaseRequest;
  readonly round: FastLease;
}

/**
 * Leases queued tasks for the room a report's worker has left, in the report's own transaction: a busy worker
 * polls only between its reports, so without this, a task queued by a start (or anything that did not hand it
 * to a worker) waits for that worker's next poll. The statement is one round of the poll's own claim (queue
 * row and task change together, SKIP LOCKED: test "reports and polls on separate connections lease each
 * queued task once"; invariant 13).
 *
 * It is sent after the decisions and before the writes, so it sees only tasks queued by other transactions,
 * and it is one statement: the writes are sent with the COMMIT pipelined after them, and anything sent later
 * would run outside the transaction. What that round cannot take (tasks under a limit, whose count needs
 * the limit's lock for the rest of a transaction) is leased after the commit by `leaseRestForReport`.
 *
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
): Promise<ReportRound> | null {
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
  const request: LeaseRequest = {
    namespace: eager.namespace,
    taskTypes: types,
    max: room,
    worker: eager.worker,
    leaseMs: eager.leaseMs,
  };
  return tx.leaseFastRound(request).then((round) => ({ request, round }));
}

/**
 * After the report has committed: when its round left room it could not fill (rows under a limit wait for
 * the worker's types, or it took rows of cancelled tasks), the rest is leased the way a poll leases, in a
 * transaction of its own, whose gated path counts each limit under its lock until that transaction commits
 * (invariant 18; test: "never lets a report and a poll both take the one permit"). The permit the report's
 * task held is free by then: its end has committed. A failure here leases nothing more and is only
 * logged: the report itself has landed, and the tasks stay queued for the next poll. Returns every task the
 * report leased, the round's first.
 */
export async function leaseRestForReport(
  ctx: Pick<TaskDeps, 'store' | 'logger'>,
  { request, round }: ReportRound,
): Promise<LeasedTask[]> {
  const rounds = new LeaseRounds(request);
  rounds.tookFast(round);
  const rest = rounds.nextFast() ?? rounds.nextGated();
  if (!rest) return round.tasks;
  try {
    return [...round.tasks, ...(await ctx.store.transaction((tx) => tx.leaseTasks(rest))).tasks];
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    ctx.logger.warn({ error }, 'could not lease queued tasks for a reporting worker; they stay queued');
    return round.tasks;
  }
}
