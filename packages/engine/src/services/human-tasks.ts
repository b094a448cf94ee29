import { checkSchema, type Json, WeftError } from '@weft/core';
import type { Evaluator } from '../decisions/evaluator.js';
import type { PassRunner } from '../decisions/pass-runner.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { HumanTaskRecord, InboxFilter } from '../store/human-records.js';
import type { Store } from '../store/store.js';

/** What the inbox of human tasks uses. */
export interface HumanTaskDeps {
  readonly store: Store;
  readonly passes: PassRunner;
  readonly evaluator: Evaluator;
  readonly payloads: PayloadStore;
}

/**
 * The inbox: tasks for people, created by `human` nodes. People list them, claim one (one claim wins, by a
 * single conditional UPDATE: invariant 19), release it, and complete it with data that must match the node's
 * form. Completing answers the attempt and decides what follows, under the run's lock, in one transaction.
 */
export class HumanTaskService {
  constructor(private readonly ctx: HumanTaskDeps) {}

  /** Tasks of a namespace, oldest first; open ones by default. */
  async list(filter: InboxFilter): Promise<HumanTaskRecord[]> {
    return Promise.all((await this.ctx.store.listHumanTasks(filter)).map((t) => this.resolve(t)));
  }

  /** One task, or `human_task_not_found`. */
  async get(namespace: string, taskId: string): Promise<HumanTaskRecord> {
    const task = await this.ctx.store.getHumanTask(taskId);
    if (!task || task.namespace !== namespace) throw notFound(taskId, namespace);
    return this.resolve(task);
  }

  /** Claims an open task for `user`; `human_task_taken` when someone else holds it. */
  async claim(namespace: string, taskId: string, user: string): Promise<HumanTaskRecord> {
    const claimed = await this.ctx.store.transaction((tx) => tx.claimHumanTask(namespace, taskId, user));
    if (claimed) return this.resolve(claimed);
    throw await this.whyNot(namespace, taskId, user, 'claim');
  }

  /** Gives a claim back, so someone else can take the task. */
  async release(namespace: string, taskId: string, user: string): Promise<HumanTaskRecord> {
    const released = await this.ctx.store.transaction((tx) => tx.releaseHumanTask(namespace, taskId, user));
    if (released) return this.resolve(released);
    throw await this.whyNot(namespace, taskId, user, 'release');
  }

  /**
   * Completes a task with `data` (checked against the form first): the data becomes the node's output,
   * and the run moves on in the same transaction. The task must be open and claimed by `user` or by
   * nobody (completing an unclaimed task claims it).
   */
  async complete(namespace: string, taskId: string, user: string, data: Json): Promise<HumanTaskRecord> {
    const task = await this.get(namespace, taskId);
    if (task.form) {
      const check = checkSchema(task.form, data);
      if (!check.ok)
        throw new WeftError(
          'invalid_data',
          `the data does not match the form of "${task.title}": ${check.error}`,
          400,
        );
    }
    const stored = await this.ctx.payloads.offload(data, 'the human task data');
    const { result: done, pass } = await this.ctx.passes.run(
      null,
      async (tx, pass) => {
        const [run] = await tx.lockRuns([task.runId], 'wait');
        if (!run) return null;
        const claimed = await tx.claimDecisions([run.id]);
        const answered = await tx.completeHumanTask(namespace, taskId, user, stored);
        if (!answered) return null;
        await this.ctx.evaluator.decideRuns(
          tx,
          [{ run, claimed: claimed.length > 0, own: [{ kind: 'node_completed', ...answered }] }],
          pass,
        );
        await pass.finish(tx);
        return answered;
      },
      { source: 'human_task' },
    );
    if (!done) throw await this.whyNot(namespace, taskId, user, 'complete');
    await this.ctx.passes.committed(pass);
    return this.get(namespace, taskId);
  }

  private async resolve(task: HumanTaskRecord): Promise<HumanTaskRecord> {
    const p = this.ctx.payloads;
    if (!p.isRef(task.input) && !p.isRef(task.data)) return task;
    return { ...task, input: await p.resolve(task.input), data: await p.resolve(task.data) };
  }

  private async whyNot(namespace: string, taskId: string, user: string, what: string): Promise<WeftError> {
    const task = await this.ctx.store.getHumanTask(taskId);
    if (!task || task.namespace !== namespace) return notFound(taskId, namespace);
    if (task.state !== 'open')
      return new WeftError('human_task_closed', `cannot ${what} task ${taskId}: it is ${task.state}`, 409);
    if (what === 'release')
      return new WeftError(
        'human_task_not_claimed',
        `cannot release task ${taskId}: ${task.claimedBy ? `it is claimed by ${task.claimedBy}` : 'nobody has claimed it'}, not ${user}`,
        409,
      );
    if (task.claimedBy && task.claimedBy !== user)
      return new WeftError(
        'human_task_taken',
        `cannot ${what} task ${taskId}: ${task.claimedBy} claimed it first`,
        409,
        { claimed_by: task.claimedBy },
      );
    return new WeftError('human_task_closed', `cannot ${what} task ${taskId}: its run has moved on`, 409);
  }
}

function notFound(taskId: string, namespace: string): WeftError {
  return new WeftError(
    'human_task_not_found',
    `there is no human task ${taskId} in namespace "${namespace}"`,
    404,
  );
}
