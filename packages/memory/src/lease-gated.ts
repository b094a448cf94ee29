import type { LeasedTask, LeaseRequest } from '@weft/engine';
import { claimTask } from './claim.js';
import { byText, type Op, plus } from './convert.js';
import { byPriority, cappedTypes, queueRows } from './queue.js';
import { type HoldRow, key, type QueueEntry } from './state.js';

interface Usage {
  max: number | null;
  windowMs: number | null;
  used: number;
  freesAt: Date | null;
}

/** True while a hold still counts: inside its rate window, or while its attempt runs. */
function counts(op: Op, h: HoldRow, kind: string, windowMs: number | null): boolean {
  if (kind === 'rate') return windowMs !== null && h.takenAt > plus(op.tx.now, -windowMs);
  const t = op.s.tasks.get(key(h.runId, h.taskId));
  return t !== undefined && t.attempt === h.attempt && t.status === 'running';
}

/** How much of a gate (`kind:namespace:name`) is in use, and its limit (none: no limit row). */
function usage(op: Op, gate: string, namespace: string, kind: string, name: string): Usage {
  // A keyed gate (`tenant#b17`) counts under the numbers of the limit named before the `#`.
  const at = name.indexOf('#');
  const limit = op.s.limits.get(key(namespace, kind, at < 0 ? name : name.slice(0, at)));
  const windowMs = limit?.windowMs ?? null;
  let used = 0;
  let oldest: number | null = null;
  for (const h of op.s.holds.pick(op.s.holdsByGate.keys(gate))) {
    if (!counts(op, h, kind, windowMs)) continue;
    used += h.amount;
    if (kind === 'rate') oldest = Math.min(oldest ?? h.takenAt.getTime(), h.takenAt.getTime());
  }
  const freesAt =
    kind === 'rate' && oldest !== null && windowMs !== null ? new Date(oldest + windowMs) : null;
  return { max: limit?.max ?? null, windowMs, used, freesAt };
}

/**
 * Leases tasks under limits (concurrency caps per task type, semaphore permits, rate limits): candidates
 * best first, each admitted only while every gate it needs has room (all or nothing, so two tasks needing
 * the same two permits never hold one each). A refused task stays queued; one refused only by rate limits
 * is held back until a window frees. Admitted tasks take holds, which count while their attempt runs (or
 * inside the rate window), so ending the attempt releases them. Transactions run one at a time, so the
 * count and the lease cannot interleave with another leaser's.
 */
export function leaseGated(op: Op, request: LeaseRequest): { tasks: LeasedTask[]; retryAt: Date | null } {
  const k = Math.min(request.max * 4 + 16, 500);
  const candidates = roundRobin(
    queueRows(op, request.namespace, request.taskTypes)
      .filter((q) => q.availableAt <= op.tx.now)
      .sort(byPriority),
  ).slice(0, k);
  if (candidates.length === 0) return { tasks: [], retryAt: null };
  const { needs, gates } = gatesNeeded(op, request, candidates);
  const ordered = [...gates.keys()].sort(byText);
  const room = new Map(
    ordered.map((g) => [g, usage(op, g, gates.get(g)!.namespace, gates.get(g)!.kind, gates.get(g)!.name)]),
  );
  const { admitted, stale, later } = admit(op, request, candidates, needs, room);
  const j = op.tx.journal;
  // Holds that count no more (attempt ended, window passed) are deleted first, under the same "lock".
  for (const gate of ordered) dropSpentHolds(op, gate, gates.get(gate)!.kind, room.get(gate)!.windowMs);
  const tasks: LeasedTask[] = [];
  for (const c of admitted) {
    op.s.queue.delete(j, c.id);
    const leased = claimTask(op, c.runId, c.taskId, request);
    if (!leased) continue;
    tasks.push(leased);
    for (const { gate, amount } of needs.get(c.id) ?? []) {
      const hold: HoldRow = {
        gate,
        runId: c.runId,
        taskId: c.taskId,
        attempt: leased.attempt,
        amount,
        takenAt: op.tx.now,
      };
      op.s.holds.set(j, key(gate, c.runId, c.taskId, leased.attempt), hold);
    }
  }
  for (const c of stale) op.s.queue.delete(j, c.id);
  for (const [c, at] of later) op.s.queue.set(j, c.id, { ...c, availableAt: at });
  const retry = [...later.values()].map((d) => d.getTime());
  return { tasks, retryAt: retry.length > 0 ? new Date(Math.min(...retry)) : null };
}

type Need = { gate: string; amount: number };

/** The gates each candidate needs (its type's cap, its semaphores, its rate limit), and every gate named. */
function gatesNeeded(op: Op, request: LeaseRequest, candidates: readonly QueueEntry[]) {
  const capped = cappedTypes(op, request.namespace, request.taskTypes);
  const needs = new Map<number, Need[]>();
  const gates = new Map<string, { namespace: string; kind: string; name: string }>();
  for (const c of candidates) {
    const list: Need[] = [];
    const add = (kind: string, name: string, amount: number) => {
      const gate = `${kind}:${c.namespace}:${name}`;
      gates.set(gate, { namespace: c.namespace, kind, name });
      list.push({ gate, amount });
    };
    if (capped.has(`${c.namespace}:${c.taskType}`)) add('concurrency', c.taskType, 1);
    for (const [gate, amount] of Object.entries(c.gates ?? {})) {
      const at = gate.indexOf(':');
      add(gate.slice(0, at), gate.slice(at + 1), amount);
    }
    needs.set(c.id, list);
  }
  return { needs, gates };
}

/**
 * Admits candidates in order while every gate each needs has room; says which rows are stale (their task
 * is no longer queued) and until when a task refused only by rate limits is held back.
 */
function admit(
  op: Op,
  request: LeaseRequest,
  candidates: readonly QueueEntry[],
  needs: ReadonlyMap<number, readonly Need[]>,
  room: ReadonlyMap<string, Usage>,
) {
  const admitted: QueueEntry[] = [];
  const stale: QueueEntry[] = [];
  const later = new Map<QueueEntry, Date>();
  for (const c of candidates) {
    if (op.locks.heldByOther(op.tx, `queue:${c.id}`)) continue;
    const t = op.s.tasks.get(key(c.runId, c.taskId));
    if (t?.status !== 'queued') {
      stale.push(c);
      continue;
    }
    if (admitted.length >= request.max) break;
    const want = needs.get(c.id) ?? [];
    const blocked = want.filter(({ gate, amount }) => {
      const u = room.get(gate)!;
      return u.max !== null && u.used + amount > u.max;
    });
    if (blocked.length === 0) {
      for (const { gate, amount } of want) room.get(gate)!.used += amount;
      admitted.push(c);
      continue;
    }
    const rate = blocked.every((b) => b.gate.startsWith('rate:')) ? blocked : [];
    const frees = rate.map((b) => room.get(b.gate)!.freesAt?.getTime() ?? 0);
    if (rate.length > 0 && frees.every((f) => f > 0)) later.set(c, new Date(Math.max(...frees)));
  }
  return { admitted, stale, later };
}

/** Deletes the holds of a gate that count no more: their attempt ended, or their rate window passed. */
function dropSpentHolds(op: Op, gate: string, kind: string, windowMs: number | null): void {
  for (const hk of [...op.s.holdsByGate.keys(gate)]) {
    const h = op.s.holds.get(hk)!;
    const keep =
      kind === 'rate' ? h.takenAt >= plus(op.tx.now, -(windowMs ?? 0)) : counts(op, h, kind, windowMs);
    if (!keep) op.s.holds.delete(op.tx.journal, hk);
  }
}

/**
 * Rows in priority order and, within a priority, round robin across keyed sets of gates (`name#bucket`):
 * the first row of each key, then the second of each, and so on; other rows keep their place by age. As in
 * PostgreSQL, one key's backlog cannot fill the candidates and hide another key's rows.
 */
function roundRobin(rows: readonly QueueEntry[]): QueueEntry[] {
  const seen = new Map<string, number>();
  const rank = new Map<number, number>();
  for (const q of rows) {
    const keyed = Object.keys(q.gates ?? {}).some((g) => g.includes('#'));
    const group = keyed ? `${q.priority}:${JSON.stringify(q.gates)}` : `row:${q.id}`;
    const n = seen.get(group) ?? 0;
    seen.set(group, n + 1);
    rank.set(q.id, n);
  }
  return [...rows].sort(
    (a, b) => b.priority - a.priority || rank.get(a.id)! - rank.get(b.id)! || a.id - b.id,
  );
}
