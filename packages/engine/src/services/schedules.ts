import { isTerminalRun, type Json, WeftError } from '@weft/core';
import { Cron } from 'croner';
import type { OverlapPolicy, ScheduleRecord } from '../store/schedule-records.js';
import type { Store } from '../store/store.js';
import type { Logger } from '../support/logger.js';
import type { DefinitionService } from './definitions.js';
import type { RunService } from './runs.js';

/** A schedule as the API creates it. */
export interface ScheduleRequest {
  readonly namespace: string;
  readonly name: string;
  readonly definition: string;
  readonly version?: number;
  /** Five fields (minute hour day month weekday), or six with seconds first. */
  readonly cron: string;
  /** An IANA time zone such as `Europe/Paris`; UTC by default. */
  readonly timezone?: string;
  readonly input?: Json;
  readonly overlap?: OverlapPolicy;
  readonly paused?: boolean;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The first time of `cron` in `timezone` strictly after `after`, or null when there is none. */
export function nextTime(cron: string, timezone: string, after: Date): Date | null {
  return new Cron(cron, { timezone, paused: true }).nextRun(after);
}

/** Checks a cron expression and time zone; throws `bad_schedule` saying what is wrong. */
export function checkCron(cron: string, timezone: string): void {
  try {
    new Cron(cron, { timezone, paused: true });
  } catch (e) {
    throw new WeftError(
      'bad_schedule',
      `cron ${JSON.stringify(cron)} in ${timezone}: ${(e as Error).message}`,
      400,
    );
  }
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw new WeftError(
      'bad_schedule',
      `${JSON.stringify(timezone)} is not a time zone (use one like Europe/Paris)`,
      400,
    );
  }
}

/** What schedules use. */
export interface ScheduleDeps {
  readonly store: Store;
  readonly definitions: Pick<DefinitionService, 'resolve'>;
  readonly logger: Logger;
}

/**
 * Schedules: cron expressions in a time zone that start runs of a definition. Each replica's schedule loop
 * takes due schedules under their row lock (SKIP LOCKED) and starts each run with the idempotency key
 * `schedule:<name>:<due time>`, so a due start happens once across replicas, even if a replica dies between
 * starting the run and moving the schedule on (invariant 11; test: "four replicas firing one due schedule at
 * once start one run").
 *
 * When due times were missed (every server was down), one start is made for the latest of them. The
 * overlap policy decides what happens when the previous run is still running: `skip` the start, `allow`
 * it, or `buffer_one`: start it when the previous run ends (at most one start waits).
 */
export class ScheduleService {
  constructor(
    private readonly ctx: ScheduleDeps,
    private readonly runs: Pick<RunService, 'open'>,
  ) {}

  /** Creates or replaces a schedule. */
  async put(request: ScheduleRequest): Promise<ScheduleRecord> {
    if (!NAME.test(request.name))
      throw new WeftError(
        'bad_schedule',
        `${JSON.stringify(request.name)} is not a valid schedule name`,
        400,
      );
    const timezone = request.timezone ?? 'UTC';
    checkCron(request.cron, timezone);
    await this.ctx.definitions.resolve(request.namespace, request.definition, request.version);
    const now = await this.ctx.store.now();
    return this.ctx.store.transaction((tx) =>
      tx.putSchedule({
        namespace: request.namespace,
        name: request.name,
        definition: request.definition,
        version: request.version ?? null,
        cron: request.cron,
        timezone,
        input: request.input ?? {},
        overlap: request.overlap ?? 'skip',
        paused: request.paused ?? false,
        nextAt: nextTime(request.cron, timezone, now),
      }),
    );
  }

  list(namespace: string): Promise<ScheduleRecord[]> {
    return this.ctx.store.listSchedules(namespace);
  }

  async get(namespace: string, name: string): Promise<ScheduleRecord> {
    const s = await this.ctx.store.getSchedule(namespace, name);
    if (!s) throw notFound(namespace, name);
    return s;
  }

  /** Pauses (no starts until resumed) or resumes (the next due time counts from now: missed ones are skipped). */
  async setPaused(namespace: string, name: string, paused: boolean): Promise<ScheduleRecord> {
    const s = await this.get(namespace, name);
    const nextAt = paused ? s.nextAt : nextTime(s.cron, s.timezone, await this.ctx.store.now());
    const updated = await this.ctx.store.transaction((tx) =>
      tx.pauseSchedule(namespace, name, paused, nextAt),
    );
    if (!updated) throw notFound(namespace, name);
    return updated;
  }

  async delete(namespace: string, name: string): Promise<void> {
    if (!(await this.ctx.store.transaction((tx) => tx.deleteSchedule(namespace, name))))
      throw notFound(namespace, name);
  }

  /** One round of the schedule loop: handles every due schedule. Returns true when there may be more. */
  async round(): Promise<boolean> {
    const due = await this.ctx.store.dueSchedules(50);
    for (const { namespace, name } of due) {
      try {
        await this.fire(namespace, name);
      } catch (e) {
        this.ctx.logger.error({ namespace, schedule: name, error: String(e) }, 'a scheduled start failed');
      }
    }
    return due.length >= 50;
  }

  /** Handles one schedule's due time (or buffered start) under its row lock. */
  async fire(namespace: string, name: string): Promise<void> {
    await this.ctx.store.transaction(async (tx) => {
      const s = await tx.lockDueSchedule(namespace, name);
      if (!s) return;
      const now = await this.ctx.store.now();
      const previous = s.lastRunId ? await this.ctx.store.getRun(s.lastRunId) : null;
      const busy = previous !== null && !isTerminalRun(previous.status);
      let { nextAt, bufferedAt, lastAt, lastRunId } = s;
      let outcome: string;
      if (s.nextAt && s.nextAt <= now) {
        const dueAt = s.nextAt;
        lastAt = dueAt;
        nextAt = nextTime(s.cron, s.timezone, now);
        if (!busy || s.overlap === 'allow') {
          const started = await this.start(s, dueAt);
          if (started.ok) lastRunId = started.runId;
          outcome = started.ok ? `started run ${started.runId}` : `could not start: ${started.error}`;
        } else if (s.overlap === 'skip') {
          outcome = `skipped the start due at ${dueAt.toISOString()}: run ${previous!.id} is still ${previous!.status}`;
        } else {
          bufferedAt = bufferedAt ?? dueAt;
          outcome = `buffered the start due at ${dueAt.toISOString()} until run ${previous!.id} ends`;
        }
      } else if (s.bufferedAt && !busy) {
        const started = await this.start(s, s.bufferedAt);
        if (started.ok) lastRunId = started.runId;
        outcome = started.ok
          ? `started run ${started.runId} (buffered since ${s.bufferedAt.toISOString()})`
          : `could not start: ${started.error}`;
        bufferedAt = null;
      } else {
        return;
      }
      await tx.recordScheduleFire({
        namespace,
        name,
        nextAt,
        bufferedAt,
        lastAt,
        lastRunId,
        lastOutcome: outcome,
      });
    });
  }

  /**
   * Starts the run for a due time; the key makes a repeat (after a crash) return the same run. A start
   * the engine refuses (quota full, definition gone) is recorded on the schedule, and the next due time is
   * tried as usual.
   */
  private async start(
    s: ScheduleRecord,
    dueAt: Date,
  ): Promise<{ ok: true; runId: string } | { ok: false; error: string }> {
    try {
      const { run } = await this.runs.open({
        namespace: s.namespace,
        definition: s.definition,
        ...(s.version !== null ? { version: s.version } : {}),
        input: s.input,
        idempotencyKey: `schedule:${s.name}:${dueAt.toISOString()}`,
      });
      return { ok: true, runId: run.id };
    } catch (e) {
      if (e instanceof WeftError) return { ok: false, error: e.message };
      throw e;
    }
  }
}

function notFound(namespace: string, name: string): WeftError {
  return new WeftError(
    'schedule_not_found',
    `there is no schedule "${name}" in namespace "${namespace}"`,
    404,
  );
}
