import type { LimitRecord, LimitUsage, ScheduleFire, ScheduleRecord, ScheduleSpec } from '@weft/engine';
import { byText, type Op, plus, scheduleRecord } from './convert.js';
import { activeRuns } from './runs.js';
import { enc, key, type LimitRow, type ScheduleRow } from './state.js';

const limitRecord = (l: LimitRow): LimitRecord => ({
  namespace: l.namespace,
  kind: l.kind,
  name: l.name,
  max: l.max,
  windowMs: l.windowMs,
  updatedAt: l.updatedAt,
});

/** Limits of one namespace, or of all, in (namespace, kind, name) order. */
export function listLimits(op: Op, namespace?: string): LimitRecord[] {
  return [...op.s.limits.values()]
    .filter((l) => namespace === undefined || l.namespace === namespace)
    .sort((a, b) => byText(a.namespace, b.namespace) || byText(a.kind, b.kind) || byText(a.name, b.name))
    .map(limitRecord);
}

/** Creates or replaces limits. */
export function setLimits(op: Op, rows: readonly LimitRecord[]): void {
  for (const r of rows)
    op.s.limits.set(op.tx.journal, key(r.namespace, r.kind, r.name), {
      namespace: r.namespace,
      kind: r.kind,
      name: r.name,
      max: r.max,
      windowMs: r.windowMs,
      updatedAt: op.tx.now,
    });
}

/** Deletes a limit; true when there was one. */
export function deleteLimit(op: Op, namespace: string, kind: LimitRecord['kind'], name: string): boolean {
  return op.s.limits.delete(op.tx.journal, key(namespace, kind, name));
}

/** Limits of a namespace with their use. */
export function limitUsage(op: Op, namespace: string): LimitUsage[] {
  return listLimits(op, namespace)
    .sort((a, b) => byText(a.kind, b.kind) || byText(a.name, b.name))
    .map((l) => {
      if (l.kind === 'quota') return { ...l, used: activeRuns(op, namespace) };
      let used = 0;
      const since = plus(op.tx.now, -(l.windowMs ?? 0));
      for (const h of op.s.holds.pick(op.s.holdsByGate.keys(`${l.kind}:${namespace}:${l.name}`))) {
        if (l.kind === 'rate') {
          if (h.takenAt > since) used += h.amount;
          continue;
        }
        const t = op.s.tasks.get(key(h.runId, h.taskId));
        if (t && t.attempt === h.attempt && t.status === 'running') used += h.amount;
      }
      return { ...l, used };
    });
}

/** Creates or replaces a schedule; a replaced one keeps its record of fires. */
export function putSchedule(op: Op, s: ScheduleSpec): ScheduleRecord {
  const k = key(s.namespace, s.name);
  const old = op.s.schedules.get(k);
  const row: ScheduleRow = {
    namespace: s.namespace,
    name: s.name,
    definition: s.definition,
    version: s.version,
    cron: s.cron,
    timezone: s.timezone,
    input: enc(s.input) ?? '{}',
    overlap: s.overlap,
    paused: s.paused,
    nextAt: s.nextAt,
    bufferedAt: old?.bufferedAt ?? null,
    lastAt: old?.lastAt ?? null,
    lastRunId: old?.lastRunId ?? null,
    lastOutcome: old?.lastOutcome ?? null,
    createdAt: old?.createdAt ?? op.tx.now,
    updatedAt: op.tx.now,
  };
  op.s.schedules.set(op.tx.journal, k, row);
  return scheduleRecord(row);
}

/** Deletes a schedule; true when there was one. */
export function deleteSchedule(op: Op, namespace: string, name: string): boolean {
  return op.s.schedules.delete(op.tx.journal, key(namespace, name));
}

/** Pauses (dropping a buffered start) or resumes a schedule. */
export function pauseSchedule(
  op: Op,
  namespace: string,
  name: string,
  paused: boolean,
  nextAt: Date | null,
): ScheduleRecord | null {
  const k = key(namespace, name);
  const s = op.s.schedules.get(k);
  if (!s) return null;
  const row = { ...s, paused, nextAt, bufferedAt: paused ? null : s.bufferedAt, updatedAt: op.tx.now };
  op.s.schedules.set(op.tx.journal, k, row);
  return scheduleRecord(row);
}

/** A namespace's schedules, by name. */
export function listSchedules(op: Op, namespace: string): ScheduleRecord[] {
  return [...op.s.schedules.values()]
    .filter((s) => s.namespace === namespace)
    .sort((a, b) => byText(a.name, b.name))
    .map(scheduleRecord);
}

/** One schedule, or null. */
export function getSchedule(op: Op, namespace: string, name: string): ScheduleRecord | null {
  const s = op.s.schedules.get(key(namespace, name));
  return s ? scheduleRecord(s) : null;
}

const isDue = (op: Op, s: ScheduleRow) =>
  !s.paused && ((s.nextAt !== null && s.nextAt <= op.tx.now) || s.bufferedAt !== null);

/** Schedules due now or holding a buffered start. */
export function dueSchedules(op: Op, limit: number): { namespace: string; name: string }[] {
  return [...op.s.schedules.values()]
    .filter((s) => isDue(op, s))
    .sort(
      (a, b) =>
        (a.nextAt?.getTime() ?? Number.POSITIVE_INFINITY) - (b.nextAt?.getTime() ?? Number.POSITIVE_INFINITY),
    )
    .slice(0, limit)
    .map((s) => ({ namespace: s.namespace, name: s.name }));
}

/** Locks a schedule that is still due, skipping one another transaction holds (it is firing it). */
export function lockDueSchedule(op: Op, namespace: string, name: string): ScheduleRecord | null {
  const s = op.s.schedules.get(key(namespace, name));
  if (!s || !isDue(op, s)) return null;
  if (!op.locks.take(op.tx, `schedule:${key(namespace, name)}`, 'skip')) return null;
  return scheduleRecord(s);
}

/** Records what became of a due time. */
export function recordScheduleFire(op: Op, f: ScheduleFire): void {
  const k = key(f.namespace, f.name);
  const s = op.s.schedules.get(k);
  if (!s) return;
  op.s.schedules.set(op.tx.journal, k, {
    ...s,
    nextAt: f.nextAt,
    bufferedAt: f.bufferedAt,
    lastAt: f.lastAt,
    lastRunId: f.lastRunId,
    lastOutcome: f.lastOutcome,
  });
}
