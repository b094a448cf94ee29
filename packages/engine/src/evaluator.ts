import {
  type Action,
  type DecisionState,
  decide,
  planLoad,
  type RunEvent,
  type RunView,
  type TaskState,
  taskKey,
} from '@weft/core';
import type { DefinitionService } from './definitions.js';
import type { Pass } from './pass.js';
import type { LockedRun } from './records.js';
import type { StoreTx } from './store.js';

const MAX_LOAD_ROUNDS = 20;

/** Events an operator sends; a paused run still handles these. */
const CONTROL_EVENTS: ReadonlySet<RunEvent['kind']> = new Set(['run_cancelled']);

/**
 * Decides for runs whose row lock the caller holds. The caller has already claimed (deleted) the run's
 * decide-queue row in this transaction, before any read here: that order is what makes a concurrent event
 * either visible to this pass or the cause of another one (seed 001, invariants 1-3).
 */
export class Evaluator {
  constructor(private readonly definitions: DefinitionService) {}

  /**
   * Decides on a locked run: first the events waiting in its inbox (only when a decide-queue row was
   * claimed; events are never in the inbox without one), then `own` events from the caller. Everything is
   * added to `pass`. Returns the number of events decided.
   */
  async decideRun(
    tx: StoreTx,
    run: LockedRun,
    claimed: boolean,
    own: readonly RunEvent[],
    pass: Pass,
  ): Promise<number> {
    const inbox = claimed ? await tx.readInbox([run.id]) : [];
    let events = [...inbox.map((i) => i.event), ...own];
    if (run.status === 'paused' && !events.some((e) => CONTROL_EVENTS.has(e.kind))) {
      // Pause is not terminal, but a paused run must not be evaluated: keep its events for resume
      // (which asks for a decision in its own transaction) and drop the claim instead of re-queuing it,
      // so deciders do not spin on the run while it is paused.
      pass.writes.inboxAppend.push(...own.map((event) => ({ runId: run.id, event })));
      return 0;
    }
    for (const item of inbox) pass.writes.inboxDone.push({ runId: run.id, id: item.id });
    if (events.length === 0) return 0;
    const workflow = await this.definitions.workflow(run.definitionId);
    let view: RunView = {
      id: run.id,
      definition: run.definitionName,
      version: run.definitionVersion,
      status: run.status,
      input: run.input,
      vars: run.vars,
      sinksDone: run.sinksDone,
    };
    const tasks = new Map<string, TaskState | null>();
    const ids = new Map<string, string>();
    const load = async (keys: readonly { nodeId: string; iteration: string }[]) => {
      const wanted = keys.filter((k) => !tasks.has(taskKey(k.nodeId, k.iteration)));
      if (wanted.length === 0) return;
      for (const k of wanted) tasks.set(taskKey(k.nodeId, k.iteration), null);
      for (const row of await tx.loadTasks(run.id, wanted)) {
        const { id, ...state } = row;
        tasks.set(taskKey(row.nodeId, row.iteration), state);
        ids.set(taskKey(row.nodeId, row.iteration), id);
      }
    };
    await load(events.flatMap((e) => planLoad(workflow, view, e)));
    let state: DecisionState = { run: view, tasks };
    const actions: Action[] = [];
    events = events.filter(Boolean);
    for (const event of events) {
      for (let round = 0; ; round++) {
        const result = await decide(workflow, state, event, run.now);
        if (result.kind === 'decided') {
          actions.push(...result.actions);
          state = result.state;
          break;
        }
        if (round >= MAX_LOAD_ROUNDS)
          throw new Error(`decision on run ${run.id} kept asking for more state (${event.kind})`);
        await load(result.keys);
        const merged = new Map(state.tasks);
        for (const k of result.keys)
          merged.set(taskKey(k.nodeId, k.iteration), tasks.get(taskKey(k.nodeId, k.iteration)) ?? null);
        state = { run: state.run, tasks: merged };
      }
      view = state.run;
    }
    pass.addActions(run, actions, ids);
    return events.length;
  }
}
