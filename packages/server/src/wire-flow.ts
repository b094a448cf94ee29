import type { HumanTaskRecord, LimitUsage, ScheduleRecord, SweeperStats } from '@weft/engine';
import { nextTime } from '@weft/engine/internal';

/** Limits, human tasks, schedules and sweeper figures as the API shows them (snake_case JSON). */

/** A limit with its use. */
export function limitJson(l: LimitUsage) {
  return {
    kind: l.kind,
    name: l.name,
    max: l.max,
    per_ms: l.windowMs,
    used: l.used,
    updated_at: l.updatedAt?.toISOString() ?? null,
  };
}

/** A human task as the inbox shows it. */
export function humanTaskJson(t: HumanTaskRecord) {
  return {
    task_id: t.taskId,
    run_id: t.runId,
    definition: t.definition,
    node_id: t.nodeId,
    iteration: t.iteration,
    attempt: t.attempt,
    title: t.title,
    description: t.description,
    assignees: t.assignees,
    form: t.form,
    input: t.input,
    state: t.state,
    claimed_by: t.claimedBy,
    claimed_at: t.claimedAt?.toISOString() ?? null,
    deadline_at: t.deadlineAt?.toISOString() ?? null,
    completed_by: t.completedBy,
    completed_at: t.completedAt?.toISOString() ?? null,
    data: t.data,
    created_at: t.createdAt.toISOString(),
  };
}

/** How many fire times a schedule shows ahead. */
const UPCOMING = 5;

/** The next fire times of a schedule from its next due time on; none while it is paused. */
function upcoming(s: ScheduleRecord): string[] {
  if (s.paused || !s.nextAt) return [];
  const out = [s.nextAt];
  while (out.length < UPCOMING) {
    const next = nextTime(s.cron, s.timezone, out[out.length - 1]!);
    if (!next) break;
    out.push(next);
  }
  return out.map((d) => d.toISOString());
}

/** A schedule. */
export function scheduleJson(s: ScheduleRecord) {
  return {
    name: s.name,
    definition: s.definition,
    version: s.version,
    cron: s.cron,
    timezone: s.timezone,
    input: s.input,
    overlap: s.overlap,
    paused: s.paused,
    next_at: s.nextAt?.toISOString() ?? null,
    upcoming: upcoming(s),
    buffered_at: s.bufferedAt?.toISOString() ?? null,
    last_at: s.lastAt?.toISOString() ?? null,
    last_run_id: s.lastRunId,
    last_outcome: s.lastOutcome,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}

/** The sweeper's figures since this server started. */
export function sweeperJson(s: SweeperStats) {
  return {
    rounds: s.rounds,
    repaired: s.repaired,
    recent: s.recent,
    // Earlier repairs checked by a later round: the run had moved, or was as stuck as before.
    checked_moved: s.checkedMoved,
    checked_stuck: s.checkedStuck,
    last_round_at: s.lastRoundAt?.toISOString() ?? null,
  };
}
