import type { Json, JsonObject } from '@weft/core';

/** Where a human task is: waiting for a person, answered, past its deadline, or dropped with its run. */
export type HumanTaskState = 'open' | 'completed' | 'expired' | 'cancelled';

/** A task for a person, as the inbox shows it. */
export interface HumanTaskRecord {
  readonly runId: string;
  readonly taskId: string;
  readonly namespace: string;
  readonly definition: string;
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
  readonly title: string;
  readonly description: string | null;
  readonly assignees: readonly string[];
  readonly form: JsonObject | null;
  readonly state: HumanTaskState;
  /** What the person is shown: the attempt's input. */
  readonly input: Json | null;
  readonly claimedBy: string | null;
  readonly claimedAt: Date | null;
  readonly deadlineAt: Date | null;
  readonly completedBy: string | null;
  readonly completedAt: Date | null;
  readonly data: Json | null;
  readonly createdAt: Date;
}

/** A human task row to insert, written with the attempt it belongs to: what the inbox shows of it. */
export type NewHumanTaskRow = Pick<
  HumanTaskRecord,
  | 'runId'
  | 'taskId'
  | 'namespace'
  | 'definition'
  | 'nodeId'
  | 'iteration'
  | 'attempt'
  | 'title'
  | 'description'
  | 'assignees'
  | 'form'
  | 'deadlineAt'
>;

/** A filter for the inbox. */
export interface InboxFilter {
  readonly namespace: string;
  /** `open` by default. */
  readonly state?: HumanTaskState;
  /** Only tasks for this person or group (or for anyone). */
  readonly assignee?: string;
  readonly claimedBy?: string;
  readonly runId?: string;
  readonly limit: number;
}
