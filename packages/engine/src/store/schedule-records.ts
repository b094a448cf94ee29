import type { Json } from '@weft/core';

/** What a due start does when the schedule's previous run is still running. */
export type OverlapPolicy = 'skip' | 'allow' | 'buffer_one';

/** A schedule as stored. */
export interface ScheduleRecord {
  readonly namespace: string;
  readonly name: string;
  readonly definition: string;
  readonly version: number | null;
  readonly cron: string;
  readonly timezone: string;
  readonly input: Json;
  readonly overlap: OverlapPolicy;
  readonly paused: boolean;
  /** The next due time (null when the expression has no future time). */
  readonly nextAt: Date | null;
  /** A due time held back by `buffer_one` until the previous run ends. */
  readonly bufferedAt: Date | null;
  readonly lastAt: Date | null;
  readonly lastRunId: string | null;
  readonly lastOutcome: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A schedule to create or replace. */
export interface ScheduleSpec {
  readonly namespace: string;
  readonly name: string;
  readonly definition: string;
  readonly version: number | null;
  readonly cron: string;
  readonly timezone: string;
  readonly input: Json;
  readonly overlap: OverlapPolicy;
  readonly paused: boolean;
  readonly nextAt: Date | null;
}

/** A schedule's state after handling a due time. */
export interface ScheduleFire {
  readonly namespace: string;
  readonly name: string;
  readonly nextAt: Date | null;
  readonly bufferedAt: Date | null;
  readonly lastAt: Date | null;
  readonly lastRunId: string | null;
  readonly lastOutcome: string;
}
