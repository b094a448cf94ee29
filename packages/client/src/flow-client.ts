import type { HumanTask, Limit, Schedule, ScheduleSpec } from './flow-types.js';
import { RunChangesClient } from './run-changes-client.js';
import type { Json } from './types.js';

/** The calls about what shapes a namespace's flow: limits, human tasks and schedules. */
export class FlowClient extends RunChangesClient {
  /** Limits of the namespace, with their use. */
  listLimits(): Promise<{ items: Limit[] }> {
    return this.call('GET', '/v1/limits');
  }

  /** Sets a limit: `per` (such as `1m`) for a rate limit; a quota has no name. */
  setLimit(kind: Limit['kind'], name: string, max: number, per?: string): Promise<Limit> {
    const path = kind === 'quota' ? '/v1/limits/quota' : `/v1/limits/${kind}/${encodeURIComponent(name)}`;
    return this.call('PUT', path, { max, ...(per ? { per } : {}) });
  }

  /** Lifts a limit. */
  deleteLimit(kind: Limit['kind'], name: string): Promise<{ deleted: boolean }> {
    const path = kind === 'quota' ? '/v1/limits/quota' : `/v1/limits/${kind}/${encodeURIComponent(name)}`;
    return this.call('DELETE', path);
  }

  /** The inbox of human tasks (open ones by default). */
  inbox(
    filter: {
      state?: HumanTask['state'];
      assignee?: string;
      claimed_by?: string;
      run_id?: string;
      limit?: number;
    } = {},
  ): Promise<{ items: HumanTask[] }> {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(filter)) if (v !== undefined) q.set(k, String(v));
    const qs = q.toString();
    return this.call('GET', `/v1/inbox${qs ? `?${qs}` : ''}`);
  }

  humanTask(taskId: string): Promise<HumanTask> {
    return this.call('GET', `/v1/inbox/${encodeURIComponent(taskId)}`);
  }

  claimHumanTask(taskId: string, user: string): Promise<HumanTask> {
    return this.call('POST', `/v1/inbox/${encodeURIComponent(taskId)}/claim`, { user });
  }

  releaseHumanTask(taskId: string, user: string): Promise<HumanTask> {
    return this.call('POST', `/v1/inbox/${encodeURIComponent(taskId)}/release`, { user });
  }

  /** Answers a human task with data matching its form. */
  completeHumanTask(taskId: string, user: string, data: Json): Promise<HumanTask> {
    return this.call('POST', `/v1/inbox/${encodeURIComponent(taskId)}/complete`, { user, data });
  }

  /** Creates or replaces a schedule. */
  putSchedule(name: string, spec: ScheduleSpec): Promise<Schedule> {
    return this.call('PUT', `/v1/schedules/${encodeURIComponent(name)}`, spec);
  }

  listSchedules(): Promise<{ items: Schedule[] }> {
    return this.call('GET', '/v1/schedules');
  }

  getSchedule(name: string): Promise<Schedule> {
    return this.call('GET', `/v1/schedules/${encodeURIComponent(name)}`);
  }

  pauseSchedule(name: string, paused: boolean): Promise<Schedule> {
    return this.call('POST', `/v1/schedules/${encodeURIComponent(name)}/${paused ? 'pause' : 'resume'}`);
  }

  deleteSchedule(name: string): Promise<{ deleted: boolean }> {
    return this.call('DELETE', `/v1/schedules/${encodeURIComponent(name)}`);
  }
}
