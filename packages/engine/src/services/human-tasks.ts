import { checkSchema, type Json, WeftError } from '@weft/core';
import type { Evaluator } from '../decisions/evaluator.js';
import {
  type HumanTaskChange,
  type HumanTaskSinks,
  humanTaskEventRows,
} from '../decisions/human-task-events.js';
import type { Pass } from '../decisions/pass.js';
import type { PassRunner } from '../decisions/pass-runner.js';
import { BlobUses } from '../payloads/blob-uses.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { HumanTaskRecord, InboxFilter } from '../store/human-records.js';
import type { Store, StoreTx } from '../store/store.js';

/** What the inbox of human tasks uses. */
export interface HumanTaskDeps {
  readonly store: Store;
  readonly passes: PassRunner;
  readonly evaluator: Evaluator;
  readonly payloads: PayloadStore;
  /** Which sinks hear of claims, releases and answers, per namespace. */
  readonly humanTaskSinks: HumanTaskSinks;
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
    const claimed = await this.change(namespace, taskId, user, 'claimed', (tx) =>
      tx.claimHumanTask(namespace, taskId, user),
    );
    if (claimed) return this.resolve(claimed);
    throw await this.whyNot(namespace, taskId, user, 'claim');
  }

  /** Gives a claim back, so someone else can take the task. */
  async release(namespace: string, taskId: string, user: string): Promise<HumanTaskRecord> {
    const released = await this.change(namespace, taskId, user, 'released', (tx) =>
      tx.releaseHumanTask(namespace, taskId, user),
    );
    if (released) return this.resolve(released);
    throw await this.whyNot(namespace, taskId, user, 'release');
  }

  /**
   * Claims or releases in one transaction, with the message announcing it to the namespace's human task
   * sinks written in that same transaction (invariant 7): a change that rolls back announces nothing, and
   * one that commits is delivered by the relay. The message id tells claims of one task apart by who and
   * when (invariant 12).
   */
  private async change(
    namespace: string,
    taskId: string,
    user: string,
    change: 'claimed' | 'released',
    write: (tx: StoreTx) => Promise<HumanTaskRecord | null>,
  ): Promise<HumanTaskRecord | null> {
    const sinks = this.ctx.humanTaskSinks.of(namespace);
    if (sinks.length === 0) return this.ctx.store.transaction(write);
    const version = await this.versionOf(taskId);
    const { result, pass } = await this.ctx.passes.run(null, async (tx, pass) => {
      const changed = await write(tx);
      if (changed && version !== null) {
        const at = changed.claimedAt ?? new Date();
        announce(pass, sinks, change, changed, version, { user }, at, `${user}@${at.toISOString()}`);
      }
      await pass.finish(tx);
      return changed;
    });
    await this.ctx.passes.committed(pass);
    return result;
  }

  /** The definition version of a task's run (immutable, so read before the transaction that uses it). */
  private async versionOf(taskId: string): Promise<number | null> {
    const task = await this.ctx.store.getHumanTask(taskId);
    const run = task ? await this.ctx.store.getRun(task.runId) : null;
    return run?.definitionVersion ?? null;
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
        // The answer's message is written with the answer (invariant 7): an answer that rolls back announces
        // nothing. It carries the data itself, never a blob reference (invariant 25).
        const sinks = this.ctx.humanTaskSinks.of(namespace);
        announce(pass, sinks, 'answered', task, run.definitionVersion, { user, data }, new Date());
        await this.ctx.evaluator.decideRuns(
          tx,
          [{ run, claimed: claimed.length > 0, own: [{ kind: 'node_completed', ...answered }] }],
          pass,
        );
        await pass.finish(tx);
        return answered;
      },
      { source: 'human_task' },
      BlobUses.of(task.runId, stored, data),
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

/** Adds the messages announcing a change of `task` to the pass's outbox rows. */
function announce(
  pass: Pass,
  sinks: readonly string[],
  change: HumanTaskChange,
  task: HumanTaskRecord,
  version: number,
  data: { readonly user: string | null; readonly data?: Json },
  at: Date,
  occurrence = '',
): void {
  const source = { ...task, version };
  pass.writes.outbox.push(
    ...humanTaskEventRows(sinks, change, source, { title: task.title, ...data }, at, occurrence),
  );
}

function notFound(taskId: string, namespace: string): WeftError {
  return new WeftError(
    'human_task_not_found',
    `there is no human task ${taskId} in namespace "${namespace}"`,
    404,
  );
}
