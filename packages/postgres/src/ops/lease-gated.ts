import { ANY_NAMESPACE, type LeasedTask, type LeaseRequest } from '@weft/engine';
import type { Db } from '../db.js';
import { fromJson, type LeasedJson, leasedColumns, leaseSet, waitedFields } from './lease-tasks.js';

interface Candidate {
  id: string;
  taskId: string;
  runId: string;
  namespace: string;
  taskType: string;
  priority: number;
  gates: Record<string, number> | null;
}

interface Gate {
  key: string;
  namespace: string;
  kind: string;
  name: string;
}

interface Usage {
  key: string;
  max: number | null;
  windowMs: number | null;
  used: number;
  freesAt: Date | null;
}

/**
 * Leases tasks under limits: concurrency caps per task type, semaphore permits, rate limits. In order:
 *
 * 1. Read the best candidates (by priority, then age) and the concurrency caps of the requested types.
 * 2. Take the transaction-scoped advisory lock of every gate those candidates need, in key order (so two
 *    leasers never deadlock), then, by statements that start after the locks are held, read each gate's use
 *    and lock the candidate rows (SKIP LOCKED). Counting before the lock, or in the statement that takes it,
 *    would read a snapshot from before the previous holder committed: ten leasers would each see room for the
 *    whole cap (invariant 18; test: "ten dispatchers leasing at once never hold more than the cap").
 * 3. Admit candidates in order while every gate each one needs has room: all or nothing per task, so two
 *    tasks needing the same two permits never hold one each. A task refused stays on the queue, free for the
 *    next lease (not leased and left to expire); one refused by a rate limit is held back until its window
 *    has room.
 * 4. Lease the admitted tasks and write their holds, in one statement.
 *
 * A hold counts only while its attempt is running, so the permit is released by the very statement that
 * ends the attempt (report, expired lease, cancel) and can never leak.
 *
 * A poll for every namespace (the server's system-task runner) takes candidates of all namespaces; each
 * candidate's gates are those of its own namespace (`kind:namespace:name`), so it counts where it belongs.
 */
export async function leaseGated(
  sql: Db,
  request: LeaseRequest,
): Promise<{ tasks: LeasedTask[]; retryAt: Date | null }> {
  const types = [...request.taskTypes];
  const inNs = request.namespace === ANY_NAMESPACE ? sql`TRUE` : sql`namespace = ${request.namespace}`;
  const k = Math.min(request.max * 4 + 16, 500);
  // Type by type, each from the head of its own range of the queue's pick indexes: tested as one list,
  // the planner may read every queued row of the namespace, whatever its type (on PostgreSQL 15 it did;
  // test: "the statements of a step read the rows of their own runs", gated path).
  const candidatesQuery = sql<Candidate[]>`
    SELECT c.id, c.task_id, c.run_id, c.namespace, c.task_type, c.priority, c.gates FROM unnest(${types}::text[]) AS ty(t)
     CROSS JOIN LATERAL (
       (SELECT q.id::text, q.task_id, q.run_id, q.namespace, q.task_type, q.priority, q.gates, q.id AS n FROM weft.queue q
         WHERE ${inNs} AND q.task_type = ty.t AND q.gates IS NOT NULL AND q.available_at <= now()
         ORDER BY q.priority DESC, q.id LIMIT ${k}::int)
       UNION ALL
       (SELECT q.id::text, q.task_id, q.run_id, q.namespace, q.task_type, q.priority, q.gates, q.id AS n FROM weft.queue q
         WHERE ${inNs} AND q.task_type = ty.t AND q.gates IS NULL AND q.available_at <= now()
         ORDER BY q.priority DESC, q.id LIMIT ${k}::int)) c
     ORDER BY c.priority DESC, c.n LIMIT ${k}::int`.execute();
  const capsQuery = sql<{ namespace: string; name: string }[]>`
    SELECT namespace, name FROM weft.limits
     WHERE ${inNs} AND kind = 'concurrency' AND name = ANY(${types}::text[])`.execute();
  const headsQuery = request.namespace === ANY_NAMESPACE ? null : keyHeads(sql, request.namespace, types);
  const [window, caps, heads] = await Promise.all([candidatesQuery, capsQuery, headsQuery]);
  const candidates = roundRobin([...window, ...(heads ?? [])]);
  if (candidates.length === 0) return { tasks: [], retryAt: null };
  const capped = new Set(caps.map((c) => `${c.namespace}:${c.name}`));
  const needs = new Map<string, { key: string; amount: number }[]>();
  const gates = new Map<string, Gate>();
  for (const c of candidates) {
    const list: { key: string; amount: number }[] = [];
    const add = (kind: string, name: string, amount: number) => {
      const key = `${kind}:${c.namespace}:${name}`;
      gates.set(key, { key, namespace: c.namespace, kind, name });
      list.push({ key, amount });
    };
    if (capped.has(`${c.namespace}:${c.taskType}`)) add('concurrency', c.taskType, 1);
    for (const [gate, amount] of Object.entries(c.gates ?? {})) {
      const at = gate.indexOf(':');
      add(gate.slice(0, at), gate.slice(at + 1), amount);
    }
    needs.set(c.id, list);
  }
  const ordered = [...gates.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const keys = ordered.map((g) => g.key);
  // Round trip 2: locks, then (fresh snapshots) use and the candidate rows.
  const locking =
    sql`SELECT pg_advisory_xact_lock(hashtextextended(g.k, 0)) FROM unnest(${keys}::text[]) AS g(k)`.execute();
  const usageQuery = sql<Usage[]>`
    SELECT g.key, l.max, l.window_ms,
           coalesce((SELECT sum(h.amount) FROM weft.holds h
                      WHERE h.gate = g.key
                        AND CASE WHEN g.kind = 'rate' THEN h.taken_at > now() - l.window_ms * interval '1 millisecond'
                                 ELSE EXISTS (SELECT 1 FROM weft.tasks t
                                               WHERE t.run_id = h.run_id AND t.id = h.task_id AND t.attempt = h.attempt
                                                 AND t.status = 'running') END), 0)::int AS used,
           CASE WHEN g.kind = 'rate' THEN
             (SELECT min(h.taken_at) + l.window_ms * interval '1 millisecond' FROM weft.holds h
               WHERE h.gate = g.key AND h.taken_at > now() - l.window_ms * interval '1 millisecond') END AS frees_at
      FROM unnest(${keys}::text[], ${ordered.map((g) => g.namespace)}::text[], ${ordered.map((g) => g.kind)}::text[],
                  ${ordered.map((g) => limitName(g.name))}::text[]) AS g(key, namespace, kind, name)
      LEFT JOIN weft.limits l ON l.namespace = g.namespace AND l.kind = g.kind AND l.name = g.name`.execute();
  const rowsQuery = sql<{ id: string; live: boolean }[]>`
    SELECT q.id::text, coalesce(t.status = 'queued', false) AS live
      FROM weft.queue q JOIN unnest(${candidates.map((c) => c.id)}::bigint[]) AS k(id) ON q.id = k.id
      LEFT JOIN weft.tasks t ON t.run_id = q.run_id AND t.id = q.task_id
     WHERE q.available_at <= now()
       FOR UPDATE OF q SKIP LOCKED`.execute();
  const [, usage, rows] = await Promise.all([locking, usageQuery, rowsQuery]);
  const room = new Map(usage.map((u) => [u.key, u]));
  const held = new Map(rows.map((r) => [r.id, r.live]));
  const admitted: Candidate[] = [];
  const stale: string[] = [];
  const later = new Map<string, Date>();
  for (const c of candidates) {
    if (!held.has(c.id)) continue; // another leaser has it, or it is gone
    if (!held.get(c.id)) {
      stale.push(c.id);
      continue;
    }
    if (admitted.length >= request.max) break;
    const want = needs.get(c.id) ?? [];
    const blocked = want.filter(({ key, amount }) => {
      const u = room.get(key);
      return u !== undefined && u.max !== null && u.used + amount > u.max;
    });
    if (blocked.length === 0) {
      for (const { key, amount } of want) {
        const u = room.get(key);
        if (u) u.used += amount;
      }
      admitted.push(c);
      continue;
    }
    // Refused: it stays queued. Held back until a rate window frees only when a rate limit is all that
    // blocks it (a held permit is freed by a report, which wakes the polls).
    const rate = blocked.every((b) => b.key.startsWith('rate:')) ? blocked : [];
    const frees = rate.map((b) => room.get(b.key)?.freesAt?.getTime() ?? 0);
    if (rate.length > 0 && frees.every((t) => t > 0)) later.set(c.id, new Date(Math.max(...frees)));
  }
  const holds = admitted.flatMap((c) => (needs.get(c.id) ?? []).map((n) => ({ ...n, taskId: c.taskId })));
  const [row] = await sql<{ tasks: LeasedJson[] }[]>`
    WITH picked AS (
      DELETE FROM weft.queue q USING unnest(${admitted.map((c) => c.id)}::bigint[]) AS k(id) WHERE q.id = k.id
      RETURNING q.task_id, q.run_id, q.available_at
    ), leased AS (
      UPDATE weft.tasks t
         SET ${leaseSet(sql, request)}
        FROM picked p
       WHERE t.run_id = p.run_id AND t.id = p.task_id AND t.status = 'queued'
         -- A scalar subquery, one key lookup per task (an anti-join may scan every run: test "the
         -- statements of a step read the rows of their own runs").
         AND (SELECT r.status FROM weft.runs r WHERE r.id = t.run_id) IS DISTINCT FROM 'paused'
      RETURNING ${leasedColumns(sql)}
    ), taken AS (
      INSERT INTO weft.holds (gate, run_id, task_id, attempt, amount)
      SELECT h.gate, l.run_id, l.id, l.attempt, h.amount
        FROM unnest(${holds.map((h) => h.key)}::text[], ${holds.map((h) => h.taskId)}::uuid[], ${holds.map((h) => h.amount)}::int[])
             AS h(gate, task_id, amount)
        JOIN leased l ON l.id = h.task_id
    ), dropped AS (
      DELETE FROM weft.queue q USING unnest(${stale}::bigint[]) AS k(id) WHERE q.id = k.id
    ), deferred AS (
      UPDATE weft.queue q SET available_at = d.at
        FROM unnest(${[...later.keys()]}::bigint[], ${[...later.values()].map((d) => d.toISOString())}::timestamptz[]) AS d(id, at)
       WHERE q.id = d.id
    ), cleaned AS (
      -- Holds that count no more (their attempt ended, or their rate window passed), under the same locks.
      DELETE FROM weft.holds h USING unnest(${keys}::text[], ${ordered.map((g) => g.kind)}::text[]) AS g(key, kind)
       WHERE h.gate = g.key
         AND CASE WHEN g.kind = 'rate'
                  THEN h.taken_at < now() - coalesce((SELECT l.window_ms FROM weft.limits l
                                                       WHERE split_part(h.gate, '#', 1) = l.kind || ':' || l.namespace || ':' || l.name), 0)
                                            * interval '1 millisecond'
                  ELSE NOT EXISTS (SELECT 1 FROM weft.tasks t WHERE t.run_id = h.run_id AND t.id = h.task_id
                                      AND t.attempt = h.attempt AND t.status = 'running') END
    )
    SELECT coalesce((SELECT json_agg(json_build_object(
              'id', l.id, 'run_id', l.run_id, 'node_id', l.node_id, 'iteration', l.iteration, 'attempt', l.attempt,
              'task_type', l.task_type, 'input', l.input, 'lease_token', l.lease_token,
              'lease_expires_at', l.lease_expires_at, 'deadline_at', l.deadline_at,
              'definition_name', r.definition_name, 'trace_context', r.trace_context, ${waitedFields(sql, sql`p.available_at`)}))
             FROM leased l JOIN picked p ON p.task_id = l.id AND p.run_id = l.run_id
             JOIN weft.runs r ON r.id = l.run_id), '[]'::json) AS tasks`.execute();
  const retry = [...later.values()].map((d) => d.getTime());
  return { tasks: row!.tasks.map(fromJson), retryAt: retry.length > 0 ? new Date(Math.min(...retry)) : null };
}

/** The limit a gate counts under: its name before the `#` of a limit key (`tenant#b17` counts under `tenant`). */
function limitName(gateName: string): string {
  const at = gateName.indexOf('#');
  return at < 0 ? gateName : gateName.slice(0, at);
}

/** Most distinct sets of gates (limit keys) whose head rows one gated lease reads per task type. */
const MAX_KEY_HEADS = 1000;

/**
 * The best queued row of each distinct set of gates of each type: one row per limit key. The window of best
 * rows alone would be filled by one key's backlog, refused by its own limit, and another key's rows behind
 * it would never be seen (invariant 29; test "one busy key does not starve another key's few tasks, and
 * each key holds its own permits"). The walk goes from one gates value to the next on `queue_pick_by_gates`,
 * so it costs a lookup per key, not per row.
 */
function keyHeads(sql: Db, namespace: string, types: readonly string[]): Promise<Candidate[]> {
  return sql<Candidate[]>`
    SELECT h.* FROM unnest(${[...types]}::text[]) AS ty(t)
     CROSS JOIN LATERAL (
       WITH RECURSIVE keys(g) AS (
         (SELECT q.gates FROM weft.queue q WHERE q.namespace = ${namespace} AND q.task_type = ty.t
             AND q.gates IS NOT NULL ORDER BY q.gates LIMIT 1)
         UNION ALL
         SELECT (SELECT q.gates FROM weft.queue q WHERE q.namespace = ${namespace} AND q.task_type = ty.t
                    AND q.gates > k.g ORDER BY q.gates LIMIT 1)
           FROM keys k WHERE k.g IS NOT NULL)
       SELECT g FROM keys WHERE g IS NOT NULL LIMIT ${MAX_KEY_HEADS}::int) k
     CROSS JOIN LATERAL (
       SELECT q.id::text, q.task_id, q.run_id, q.namespace, q.task_type, q.priority, q.gates FROM weft.queue q
        WHERE q.namespace = ${namespace} AND q.task_type = ty.t AND q.gates = k.g AND q.available_at <= now()
        ORDER BY q.priority DESC, q.id LIMIT 1) h`.execute();
}

/**
 * Candidates once each, best priority first and, within a priority, round robin across sets of gates: the
 * first row of each key, then the second of each, and so on, oldest first within a round. So slots under a
 * shared cap go to every key in turn, not to the key with the longest backlog.
 */
function roundRobin(rows: readonly Candidate[]): Candidate[] {
  const unique = [...new Map(rows.map((c) => [c.id, c])).values()].sort(
    (a, b) => b.priority - a.priority || Number(a.id) - Number(b.id),
  );
  const seen = new Map<string, number>();
  const rank = new Map<string, number>();
  for (const c of unique) {
    // Only keyed gates (`name#bucket`) take turns; other rows keep their place by age.
    const keyed = Object.keys(c.gates ?? {}).some((g) => g.includes('#'));
    const group = keyed ? `${c.priority}:${JSON.stringify(c.gates)}` : c.id;
    const n = seen.get(group) ?? 0;
    seen.set(group, n + 1);
    rank.set(c.id, n);
  }
  return unique.sort(
    (a, b) => b.priority - a.priority || rank.get(a.id)! - rank.get(b.id)! || Number(a.id) - Number(b.id),
  );
}
