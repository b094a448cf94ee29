import type { Arrival } from '@weft/core';
import type { RunMoveWrite } from '@weft/engine';
import type { Op } from './convert.js';
import { dec, enc, key } from './state.js';

/**
 * Moves a locked run to another version: the run row, then the attempts, arrivals, timers, inbox events and human
 * tasks that name a renamed node (attempts first, as in PostgreSQL: see invariant 28).
 */
export function moveRun(op: Op, move: RunMoveWrite): void {
  const run = op.s.runs.get(move.runId);
  if (!run) return;
  const { journal } = op.tx;
  op.s.runs.set(journal, move.runId, {
    ...run,
    definitionId: move.definitionId,
    definitionVersion: move.definitionVersion,
  });
  const renamed = (id: string) => (Object.hasOwn(move.renames, id) ? move.renames[id]! : id);
  if (Object.keys(move.renames).length === 0) return;
  for (const t of op.s.tasks.pick(op.s.tasksByRun.keys(move.runId))) {
    const arrivals = dec<Arrival[]>(t.arrivals);
    const next = arrivals?.map((a) => ({ ...a, from: renamed(a.from) })) ?? null;
    op.s.tasks.set(journal, key(t.runId, t.id), { ...t, nodeId: renamed(t.nodeId), arrivals: enc(next) });
  }
  for (const m of op.s.timers.pick(op.s.timersByRun.keys(move.runId)))
    if (renamed(m.purpose.nodeId) !== m.purpose.nodeId)
      op.s.timers.set(journal, key(m.runId, m.id), {
        ...m,
        purpose: { ...m.purpose, nodeId: renamed(m.purpose.nodeId) },
      });
  for (const i of op.s.inbox.pick(op.s.inboxByRun.keys(move.runId))) {
    const event = dec<{ nodeId?: string }>(i.event);
    if (event && typeof event.nodeId === 'string' && renamed(event.nodeId) !== event.nodeId)
      op.s.inbox.set(journal, key(i.runId, i.id), {
        ...i,
        event: enc({ ...event, nodeId: renamed(event.nodeId) })!,
      });
  }
  for (const h of op.s.humanTasks.values())
    if (h.runId === move.runId && renamed(h.nodeId) !== h.nodeId)
      op.s.humanTasks.set(journal, h.taskId, { ...h, nodeId: renamed(h.nodeId) });
}
